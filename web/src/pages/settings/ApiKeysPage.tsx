/** The account's API keys: listed by name and prefix (never the key), created (the key shown once), deleted. */
import { Button, Group, Modal, Paper, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { ShownOnce } from './ShownOnce';
import { ListFooter } from '../../ui/ListFooter';

type ApiKey = Schemas['ApiKey'];
const PAGE_SIZE = 25;

function CreateKey({ onCreated }: { onCreated: (key: Schemas['CreatedApiKey']) => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/api-keys', { body: { name } })),
    onSuccess: (key) => {
      setName('');
      onCreated(key);
      void queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <Paper withBorder p="md" mb="md" component="form" onSubmit={submit} aria-labelledby="new-key-heading">
      <Title order={2} size="h4" id="new-key-heading" mb="xs">
        New API key
      </Title>
      <Group align="flex-end" wrap="wrap">
        <TextInput
          label="Name"
          description="What the key is for, e.g. CRM sync"
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(create.error, 'body/name')}
          maxLength={100}
          style={{ flex: '1 1 240px' }}
        />
        <Button type="submit" loading={create.isPending}>
          Create key
        </Button>
      </Group>
      <FormError error={create.error} fields={['body/name']} />
    </Paper>
  );
}

function DeleteKey({ apiKey }: { apiKey: ApiKey }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/api-keys/{id}', { params: { path: { id: apiKey.id } } })),
    onSuccess: () => {
      setOpen(false);
      void queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  return (
    <>
      <Button size="xs" color="red" variant="light" onClick={() => setOpen(true)} aria-label={`Delete ${apiKey.name}`}>
        Delete
      </Button>
      <Modal opened={open} onClose={() => setOpen(false)} title={`Delete the key “${apiKey.name}”?`}>
        <Stack>
          <Text size="sm">It stops working at once: anything still using it gets 401 answers.</Text>
          {remove.error && <ErrorState error={remove.error} title="Not deleted" />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpen(false)}>
              Cancel
            </Button>
            <Button color="red" onClick={() => remove.mutate()} loading={remove.isPending}>
              Delete the key
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

export function Component() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const [created, setCreated] = useState<Schemas['CreatedApiKey'] | null>(null);
  const keys = useQuery({
    queryKey: ['api-keys', page],
    queryFn: () =>
      unwrap(api.GET('/v1/api-keys', { params: { query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <PageHeader title="API keys" />
      <Text c="dimmed" size="sm" mb="md">
        A key signs requests to the API as this account: send it as <code>Authorization: Bearer &lt;key&gt;</code>.
      </Text>
      <CreateKey onCreated={setCreated} />
      {created && (
        <ShownOnce
          title={`The key “${created.name}”`}
          label="API key"
          value={created.key}
          onDone={() => setCreated(null)}
        />
      )}
      {keys.isPending ? (
        <Loading label="Loading API keys" />
      ) : keys.error ? (
        <ErrorState error={keys.error} retry={() => keys.refetch()} />
      ) : keys.data.total === 0 ? (
        <EmptyState title="No API keys yet">Create one for each system that calls the API.</EmptyState>
      ) : (
        <>
          <ScrollTable label="API keys" minWidth={560} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Starts with</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>
                  <span className="visually-hidden">Actions</span>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {keys.data.apiKeys.map((key) => (
                <Table.Tr key={key.id}>
                  <Table.Td>{key.name}</Table.Td>
                  <Table.Td>
                    <code>{key.displayPrefix}…</code>
                  </Table.Td>
                  <Table.Td>{formatDateTime(key.createdAt)}</Table.Td>
                  <Table.Td>{key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'never'}</Table.Td>
                  <Table.Td>
                    <DeleteKey apiKey={key} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <ListFooter
            total={keys.data.total}
            noun="key"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => setParams({ page: String(value) })}
          />
        </>
      )}
    </>
  );
}
