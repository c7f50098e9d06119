/** The account's contact lists (each made by a CSV import) with their counts; import, export and the DNC list. */
import { Anchor, Button, Table, Text } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, Loading, PageHeader } from '../../ui/states';
import { ListFooter } from '../../ui/ListFooter';

const PAGE_SIZE = 25;

export function Component() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const lists = useQuery({
    queryKey: ['contact-lists', page],
    queryFn: () =>
      unwrap(api.GET('/v1/contact-lists', { params: { query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  const importButton = (
    <Button component={Link} to="/contacts/import">
      Import CSV
    </Button>
  );
  return (
    <>
      <PageHeader title="Contact lists">
        {importButton}
        <Button component="a" href="/api/v1/exports/contacts.csv" download variant="default">
          Export all contacts (CSV)
        </Button>
        <Button component={Link} to="/dnc" variant="default">
          Do-not-call list
        </Button>
      </PageHeader>
      {lists.isPending ? (
        <Loading label="Loading contact lists" />
      ) : lists.error ? (
        <ErrorState error={lists.error} retry={() => lists.refetch()} />
      ) : lists.data.total === 0 ? (
        <EmptyState title="No contact lists yet" action={importButton}>
          A list is made by importing a CSV file of contacts; campaigns call the contacts of their lists.
        </EmptyState>
      ) : (
        <>
          <ScrollTable label="Contact lists" minWidth={640} striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Rows</Table.Th>
                <Table.Th>Imported</Table.Th>
                <Table.Th>Invalid</Table.Th>
                <Table.Th>Do not call</Table.Th>
                <Table.Th>Imported at</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {lists.data.contactLists.map((list) => (
                <Table.Tr key={list.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/contacts/lists/${list.id}`}>
                      {list.name}
                    </Anchor>
                    {list.import.state !== 'completed' && (
                      <Text span size="sm" c="dimmed">
                        {' '}
                        {list.import.state === 'processing'
                          ? `(importing, ${Math.round(100 * list.import.fraction)}%)`
                          : '(import failed)'}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{list.counts.rows.toLocaleString()}</Table.Td>
                  <Table.Td>{(list.counts.imported + list.counts.updated).toLocaleString()}</Table.Td>
                  <Table.Td>{list.counts.invalid.toLocaleString()}</Table.Td>
                  <Table.Td>{list.counts.dnc.toLocaleString()}</Table.Td>
                  <Table.Td>{formatDateTime(list.createdAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <ListFooter
            total={lists.data.total}
            noun="list"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => setParams({ page: String(value) })}
          />
        </>
      )}
    </>
  );
}
