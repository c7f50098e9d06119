import { Button } from '@mantine/core';
import { Link } from 'react-router';
import { EmptyState, PageHeader } from '../ui/states';

export function Component() {
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState
        title="There is no page at this address"
        action={
          <Button component={Link} to="/">
            Home
          </Button>
        }
      >
        Check the address, or start from the home page.
      </EmptyState>
    </>
  );
}
