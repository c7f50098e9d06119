import { Group, Pagination, Text } from '@mantine/core';

/** Under a paged table: how many there are in all, and the page buttons (labelled for screen readers). */
export function ListFooter(props: {
  total: number;
  /** What is counted, in the singular ("call"); an `s` is added for any other number than one. */
  noun: string;
  pageSize: number;
  page: number;
  onPage: (page: number) => void;
}) {
  const { total, noun, pageSize, page, onPage } = props;
  return (
    <Group justify="space-between" mt="md">
      <Text size="sm" c="dimmed">
        {total.toLocaleString()} {noun}
        {total === 1 ? '' : 's'}
      </Text>
      <Pagination
        total={Math.ceil(total / pageSize)}
        value={page}
        onChange={onPage}
        getControlProps={(control) => ({ 'aria-label': `${control} page` })}
        getItemProps={(value) => ({ 'aria-label': `Page ${value}` })}
      />
    </Group>
  );
}
