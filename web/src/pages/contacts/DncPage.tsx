/** The do-not-call list: search it, add a number or many at once, take a number off. */
import { Alert, Button, Card, Group, SimpleGrid, Stack, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, fieldError, unwrap } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { ListFooter } from '../../ui/ListFooter';

const PAGE_SIZE = 50;

function AddOne() {
  const queryClient = useQueryClient();
  const [phone, setPhone] = useState('');
  const [reason, setReason] = useState('');
  const add = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/dnc', { body: { phone: phone.trim(), reason: reason.trim() || null } })),
    onSuccess: () => {
      setPhone('');
      setReason('');
      return queryClient.invalidateQueries({ queryKey: ['dnc'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="Add a number">
      <Stack gap="sm">
        <TextInput
          label="Phone number"
          type="tel"
          required
          value={phone}
          onChange={(e) => setPhone(e.currentTarget.value)}
          error={fieldError(add.error, 'body/phone')}
        />
        <TextInput
          label="Reason (optional)"
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value)}
          error={fieldError(add.error, 'body/reason')}
        />
        <FormError error={add.error} fields={['body/phone', 'body/reason']} />
        <Group>
          <Button type="submit" loading={add.isPending}>
            Add to the list
          </Button>
          {add.data && (
            <Text size="sm" c="teal.9" role="status">
              {add.data.phone} is on the list
            </Text>
          )}
        </Group>
      </Stack>
    </form>
  );
}

function AddMany() {
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const numbers = text
    .split(/[\n,;]+/)
    .map((line) => line.trim())
    .filter(Boolean);
  const add = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/dnc/bulk', { body: numbers })),
    onSuccess: () => {
      setText('');
      return queryClient.invalidateQueries({ queryKey: ['dnc'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="Add many numbers">
      <Stack gap="sm">
        <Textarea
          label="Numbers, one a line"
          description="Up to 10,000 at once; an invalid number is left out and reported"
          autosize
          minRows={3}
          maxRows={10}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          error={fieldError(add.error, 'body')}
        />
        <FormError error={add.error} fields={['body']} />
        <Group>
          <Button type="submit" variant="default" disabled={numbers.length === 0} loading={add.isPending}>
            Add {numbers.length || ''} number{numbers.length === 1 ? '' : 's'}
          </Button>
        </Group>
        {add.data && (
          <Alert color={add.data.invalid ? 'yellow' : 'green'} role="status">
            {add.data.added} added, {add.data.duplicates} already on the list, {add.data.invalid} invalid;{' '}
            {add.data.contactsFlagged} contact{add.data.contactsFlagged === 1 ? '' : 's'} flagged.
            {add.data.errors.map((error) => (
              <Text key={error.row} size="sm">
                Line {error.row}: {error.phone} ({error.message})
              </Text>
            ))}
          </Alert>
        )}
      </Stack>
    </form>
  );
}

export function Component() {
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const q = params.get('q') ?? '';
  const [search, setSearch] = useState(q);
  useEffect(() => setSearch(q), [q]);
  const entries = useQuery({
    queryKey: ['dnc', page, q],
    queryFn: () =>
      unwrap(
        api.GET('/v1/dnc', {
          params: { query: { ...(q ? { q } : {}), limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const remove = useMutation({
    mutationFn: (phone: string) => unwrap(api.DELETE('/v1/dnc/{phone}', { params: { path: { phone } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['dnc'] }),
  });
  return (
    <>
      <PageHeader title="Do-not-call list" />
      <Text c="dimmed" mb="md">
        No campaign ever dials a number on this list; contacts with such a number are flagged.
      </Text>
      <SimpleGrid cols={{ base: 1, md: 2 }} mb="xl">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Add a number
          </Title>
          <AddOne />
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Add many
          </Title>
          <AddMany />
        </Card>
      </SimpleGrid>
      <Title order={2} size="h3" mb="sm">
        Numbers on the list
      </Title>
      <form
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setParams(search.trim() ? { q: search.trim() } : {});
        }}
      >
        <Group align="flex-end" gap="xs" mb="sm">
          <TextInput
            label="Search the list"
            description="Digits of the number, or words of the reason"
            value={search}
            onChange={(e) => setSearch(e.currentTarget.value)}
            error={fieldError(entries.error, 'querystring/q')}
          />
          <Button type="submit" variant="default">
            Search
          </Button>
        </Group>
      </form>
      {remove.error && <ErrorState error={remove.error} title="Not removed" />}
      {entries.isPending ? (
        <Loading label="Loading the do-not-call list" />
      ) : entries.error ? (
        <ErrorState error={entries.error} retry={() => entries.refetch()} />
      ) : entries.data.total === 0 ? (
        <EmptyState title={q ? 'No number matches' : 'The do-not-call list is empty'} />
      ) : (
        <>
          <ScrollTable label="Numbers on the list" minWidth={480} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Number</Table.Th>
                <Table.Th>Reason</Table.Th>
                <Table.Th>Added</Table.Th>
                <Table.Th>Take off</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {entries.data.dncEntries.map((entry) => (
                <Table.Tr key={entry.phone}>
                  <Table.Td>{entry.phone}</Table.Td>
                  <Table.Td>{entry.reason ?? '—'}</Table.Td>
                  <Table.Td>{formatDateTime(entry.createdAt)}</Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="subtle"
                      color="red"
                      aria-label={`Remove ${entry.phone}`}
                      loading={remove.isPending && remove.variables === entry.phone}
                      onClick={() => remove.mutate(entry.phone)}
                    >
                      Remove
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <ListFooter
            total={entries.data.total}
            noun="number"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => setParams({ ...(q ? { q } : {}), page: String(value) })}
          />
        </>
      )}
    </>
  );
}
