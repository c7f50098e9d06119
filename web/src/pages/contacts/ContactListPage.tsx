/** One contact list: its import counts and its contacts, searchable, filterable by DNC, exportable. */
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Group,
  Pagination,
  SegmentedControl,
  SimpleGrid,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, fieldError, unwrap } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, Loading, PageHeader } from '../../ui/states';

const PAGE_SIZE = 50;

const fullName = (contact: { firstName: string | null; lastName: string | null }) =>
  [contact.firstName, contact.lastName].filter(Boolean).join(' ') || '(no name)';

function Contacts({ listId }: { listId: string }) {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const q = params.get('q') ?? '';
  const dncFilter = params.get('dnc') ?? 'all';
  const [search, setSearch] = useState(q);
  useEffect(() => setSearch(q), [q]);
  const filters = {
    ...(q ? { q } : {}),
    ...(dncFilter === 'all' ? {} : { dnc: dncFilter === 'yes' ? ('true' as const) : ('false' as const) }),
  };
  const contacts = useQuery({
    queryKey: ['contact-list-contacts', listId, page, q, dncFilter],
    queryFn: () =>
      unwrap(
        api.GET('/v1/contact-lists/{id}/contacts', {
          params: { path: { id: listId }, query: { ...filters, limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const setFilter = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value && value !== 'all') next.set(key, value);
    else next.delete(key);
    next.delete('page');
    setParams(next);
  };
  const exportQuery = new URLSearchParams({ listId, ...(q ? { q } : {}) });
  if (dncFilter !== 'all') exportQuery.set('dnc', String(dncFilter === 'yes'));
  return (
    <section aria-labelledby="contacts-heading">
      <Group justify="space-between" align="flex-end" mb="sm" wrap="wrap">
        <form
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            setFilter('q', search.trim());
          }}
        >
          <Group align="flex-end" gap="xs" wrap="wrap">
            <TextInput
              label="Search contacts"
              description="Name, email or phone: 3 characters or more"
              value={search}
              onChange={(e) => setSearch(e.currentTarget.value)}
              error={fieldError(contacts.error, 'querystring/q')}
            />
            <Button type="submit" variant="default">
              Search
            </Button>
          </Group>
        </form>
        <SegmentedControl
          aria-label="Do-not-call filter"
          value={dncFilter}
          onChange={(value) => setFilter('dnc', value)}
          data={[
            { value: 'all', label: 'All' },
            { value: 'no', label: 'Callable' },
            { value: 'yes', label: 'Do not call' },
          ]}
        />
      </Group>
      <Group justify="space-between" mb="xs">
        <Text component="h2" fw={700} size="lg" id="contacts-heading">
          Contacts
        </Text>
        <Anchor href={`/api/v1/exports/contacts.csv?${exportQuery}`} download>
          Export these contacts (CSV)
        </Anchor>
      </Group>
      {contacts.isPending ? (
        <Loading label="Loading contacts" />
      ) : contacts.error ? (
        <ErrorState error={contacts.error} retry={() => contacts.refetch()} />
      ) : contacts.data.total === 0 ? (
        <EmptyState title={q || dncFilter !== 'all' ? 'No contact matches' : 'This list has no contacts'} />
      ) : (
        <>
          <ScrollTable label="Contacts" minWidth={640} striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Phone</Table.Th>
                <Table.Th>Email</Table.Th>
                <Table.Th>Company</Table.Th>
                <Table.Th>Do not call</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {contacts.data.contacts.map((contact) => (
                <Table.Tr key={contact.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/contacts/${contact.id}`}>
                      {fullName(contact)}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{contact.phone}</Table.Td>
                  <Table.Td>{contact.email ?? '—'}</Table.Td>
                  <Table.Td>{contact.company ?? '—'}</Table.Td>
                  <Table.Td>{contact.dnc ? <Badge color="red.9">do not call</Badge> : 'no'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              {contacts.data.totalExact ? '' : 'at least '}
              {contacts.data.total.toLocaleString()} contact{contacts.data.total === 1 ? '' : 's'}
            </Text>
            <Pagination
              total={Math.ceil(contacts.data.total / PAGE_SIZE)}
              value={page}
              onChange={(value) => {
                const next = new URLSearchParams(params);
                next.set('page', String(value));
                setParams(next);
              }}
              getControlProps={(control) => ({ 'aria-label': `${control} page` })}
              getItemProps={(value) => ({ 'aria-label': `Page ${value}` })}
            />
          </Group>
        </>
      )}
    </section>
  );
}

export function Component() {
  const { id = '' } = useParams();
  const list = useQuery({
    queryKey: ['contact-list', id],
    queryFn: () => unwrap(api.GET('/v1/contact-lists/{id}', { params: { path: { id } } })),
    // A list still importing is read again until its import is done.
    refetchInterval: (query) => (query.state.data?.import.state === 'processing' ? 1000 : false),
  });
  if (list.isPending) return <Loading label="Loading the list" />;
  if (list.error)
    return (
      <>
        <PageHeader title="Contact list" />
        <ErrorState error={list.error} retry={() => list.refetch()} />
      </>
    );
  const { counts } = list.data;
  const figures: Array<[string, number]> = [
    ['Rows imported from', counts.rows],
    ['New contacts', counts.imported],
    ['Updated', counts.updated],
    ['Duplicates', counts.duplicates],
    ['Invalid rows', counts.invalid],
    ['Do not call', counts.dnc],
  ];
  return (
    <>
      <PageHeader title={list.data.name}>
        <Button component={Link} to="/contacts" variant="default">
          All lists
        </Button>
      </PageHeader>
      <Text c="dimmed" size="sm" mb="sm">
        Imported {formatDateTime(list.data.createdAt)}; default country {list.data.defaultCountry}; a number already in
        the account was {list.data.duplicatePolicy === 'update' ? 'updated' : 'kept as it was'}.
      </Text>
      {list.data.import.state === 'processing' && (
        <Alert mb="sm" role="status" title="Importing">
          {list.data.import.rowsProcessed.toLocaleString()} rows checked, {Math.round(100 * list.data.import.fraction)}%
          done; the counts and contacts appear when the import completes.
        </Alert>
      )}
      {list.data.import.state === 'failed' && (
        <Alert mb="sm" color="red" role="alert" title="The import failed: nothing was imported">
          {list.data.import.failure?.message ?? 'The import stopped before it completed.'}
        </Alert>
      )}
      <SimpleGrid cols={{ base: 2, sm: 3, lg: 6 }} mb="lg">
        {figures.map(([label, value]) => (
          <Card key={label} withBorder padding="sm">
            <Text size="sm" c="dimmed">
              {label}
            </Text>
            <Text size="lg" fw={700}>
              {value.toLocaleString()}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
      <Contacts listId={id} />
    </>
  );
}
