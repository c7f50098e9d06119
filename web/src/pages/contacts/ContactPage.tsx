/** One contact: its fields (editable), attributes, lists, and its place on the do-not-call list. */
import {
  Anchor,
  Badge,
  Button,
  Card,
  Group,
  List,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { ErrorState, FormError, Loading, PageHeader } from '../../ui/states';

type Contact = Schemas['ContactDetail'];
type Editable = 'firstName' | 'lastName' | 'phone' | 'email' | 'company' | 'timezone';
const FIELDS: Array<{ key: Editable; label: string; type?: string }> = [
  { key: 'firstName', label: 'First name' },
  { key: 'lastName', label: 'Last name' },
  { key: 'phone', label: 'Phone', type: 'tel' },
  { key: 'email', label: 'Email', type: 'email' },
  { key: 'company', label: 'Company' },
  { key: 'timezone', label: 'Time zone (e.g. America/New_York)' },
];

function EditContact({ contact }: { contact: Contact }) {
  const queryClient = useQueryClient();
  const initial = Object.fromEntries(FIELDS.map(({ key }) => [key, contact[key] ?? ''])) as Record<Editable, string>;
  const [values, setValues] = useState(initial);
  const save = useMutation({
    mutationFn: () => {
      const changed = Object.fromEntries(
        FIELDS.filter(({ key }) => values[key] !== initial[key]).map(({ key }) => [
          key,
          key === 'phone' ? values.phone.trim() : values[key].trim() || null,
        ]),
      );
      return unwrap(api.PATCH('/v1/contacts/{id}', { params: { path: { id: contact.id } }, body: changed }));
    },
    onSuccess: (saved) => queryClient.setQueryData(['contact', contact.id], saved),
  });
  const dirty = FIELDS.some(({ key }) => values[key] !== initial[key]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="Edit the contact">
      <Stack gap="sm">
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          {FIELDS.map(({ key, label, type }) => (
            <TextInput
              key={key}
              label={label}
              type={type}
              required={key === 'phone'}
              value={values[key]}
              onChange={(e) => {
                const value = e.currentTarget.value;
                setValues((v) => ({ ...v, [key]: value }));
              }}
              error={fieldError(save.error, `body/${key}`)}
            />
          ))}
        </SimpleGrid>
        <FormError error={save.error} fields={FIELDS.map(({ key }) => `body/${key}`)} />
        <Group>
          <Button type="submit" disabled={!dirty} loading={save.isPending}>
            Save
          </Button>
          {save.isSuccess && !dirty && (
            <Text size="sm" c="teal.9" role="status">
              Saved
            </Text>
          )}
        </Group>
      </Stack>
    </form>
  );
}

function DoNotCall({ contact }: { contact: Contact }) {
  const queryClient = useQueryClient();
  const toggle = useMutation({
    mutationFn: async () => {
      if (contact.dnc) await unwrap(api.DELETE('/v1/dnc/{phone}', { params: { path: { phone: contact.phone } } }));
      else await unwrap(api.POST('/v1/dnc', { body: { phone: contact.phone, reason: 'Added from the contact page' } }));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['contact', contact.id] }),
  });
  return (
    <Stack gap="xs">
      <Text>
        {contact.dnc
          ? 'This number is on the do-not-call list: no campaign calls it.'
          : 'This number is not on the do-not-call list.'}
      </Text>
      <Group>
        <Button
          variant={contact.dnc ? 'default' : 'light'}
          color={contact.dnc ? undefined : 'red'}
          onClick={() => toggle.mutate()}
          loading={toggle.isPending}
        >
          {contact.dnc ? 'Take off the do-not-call list' : 'Add to the do-not-call list'}
        </Button>
      </Group>
      {toggle.error && <ErrorState error={toggle.error} title="Not changed" />}
    </Stack>
  );
}

export function Component() {
  const { id = '' } = useParams();
  const contact = useQuery({
    queryKey: ['contact', id],
    queryFn: () => unwrap(api.GET('/v1/contacts/{id}', { params: { path: { id } } })),
  });
  if (contact.isPending) return <Loading label="Loading the contact" />;
  if (contact.error)
    return (
      <>
        <PageHeader title="Contact" />
        <ErrorState error={contact.error} retry={() => contact.refetch()} />
      </>
    );
  const data = contact.data;
  const name = [data.firstName, data.lastName].filter(Boolean).join(' ') || data.phone;
  const attributes = Object.entries(data.attributes);
  return (
    <>
      <PageHeader title={name}>{data.dnc && <Badge color="red.9">do not call</Badge>}</PageHeader>
      <Text c="dimmed" size="sm" mb="md">
        Added {formatDateTime(data.createdAt)}; changed {formatDateTime(data.updatedAt)}
      </Text>
      <Stack gap="lg">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Details
          </Title>
          <EditContact key={data.updatedAt} contact={data} />
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Do not call
          </Title>
          <DoNotCall contact={data} />
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Lists
          </Title>
          {data.lists.length === 0 ? (
            <Text c="dimmed">In no list.</Text>
          ) : (
            <List>
              {data.lists.map((list) => (
                <List.Item key={list.id}>
                  <Anchor component={Link} to={`/contacts/lists/${list.id}`}>
                    {list.name}
                  </Anchor>
                </List.Item>
              ))}
            </List>
          )}
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Attributes
          </Title>
          {attributes.length === 0 ? (
            <Text c="dimmed">No other columns were imported for this contact.</Text>
          ) : (
            <ScrollTable label="Attributes" minWidth={320}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Column</Table.Th>
                  <Table.Th>Value</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {attributes.map(([key, value]) => (
                  <Table.Tr key={key}>
                    <Table.Td>{key}</Table.Td>
                    <Table.Td>{value}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </ScrollTable>
          )}
        </Card>
      </Stack>
    </>
  );
}
