/**
 * The account's webhook endpoints: each one's state (enabled, failure streak, why it was disabled), and a form to
 * register one; the new endpoint's signing secret is shown once, with a copy button.
 */
import {
  Anchor,
  Badge,
  Button,
  Checkbox,
  Group,
  Paper,
  SimpleGrid,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { ShownOnce } from '../settings/ShownOnce';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events';
import { ListFooter } from '../../ui/ListFooter';

const PAGE_SIZE = 25;

export function WebhookState({ webhook }: { webhook: Schemas['GetWebhookResponse'] }) {
  if (webhook.enabled) return <Badge color="teal.9">enabled</Badge>;
  return <Badge color={webhook.disabledReason ? 'red.9' : 'gray.7'}>disabled</Badge>;
}

function CreateWebhook({ onCreated }: { onCreated: (webhook: Schemas['CreateWebhookResponse']) => void }) {
  const queryClient = useQueryClient();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>([]);
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/webhooks', {
          body: { url, description: description || null, ...(events.length ? { events } : {}) },
        }),
      ),
    onSuccess: (webhook) => {
      setUrl('');
      setDescription('');
      setEvents([]);
      onCreated(webhook);
      void queryClient.invalidateQueries({ queryKey: ['webhooks'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const fields = ['body/url', 'body/description', 'body/events'];
  return (
    <Paper withBorder p="md" mb="md" component="form" onSubmit={submit} aria-labelledby="new-webhook-heading">
      <Title order={2} size="h4" id="new-webhook-heading" mb="xs">
        New endpoint
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput
          label="URL"
          description="Where events are POSTed (https)"
          type="url"
          required
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          error={fieldError(create.error, 'body/url')}
        />
        <TextInput
          label="Description"
          description="Optional: what receives these events"
          value={description}
          onChange={(e) => setDescription(e.currentTarget.value)}
          error={fieldError(create.error, 'body/description')}
          maxLength={200}
        />
      </SimpleGrid>
      <Checkbox.Group
        mt="sm"
        label="Events"
        description="Every event type when none is chosen"
        value={events}
        onChange={(value) => setEvents(value as WebhookEventType[])}
        error={fieldError(create.error, 'body/events')}
      >
        <Group mt="xs" gap="md">
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <Checkbox key={type} value={type} label={type} />
          ))}
        </Group>
      </Checkbox.Group>
      <FormError error={create.error} fields={fields} />
      <Group mt="md">
        <Button type="submit" loading={create.isPending}>
          Add endpoint
        </Button>
      </Group>
    </Paper>
  );
}

export function Component() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const [created, setCreated] = useState<Schemas['CreateWebhookResponse'] | null>(null);
  const webhooks = useQuery({
    queryKey: ['webhooks', page],
    queryFn: () =>
      unwrap(api.GET('/v1/webhooks', { params: { query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <PageHeader title="Webhooks" />
      <Text c="dimmed" size="sm" mb="md">
        Each delivery is signed with the endpoint's secret; after 10 failed attempts in a row the endpoint is disabled.
      </Text>
      <CreateWebhook onCreated={setCreated} />
      {created && (
        <ShownOnce
          title={`The signing secret of ${created.url}`}
          label="Signing secret"
          value={created.secret}
          onDone={() => setCreated(null)}
        />
      )}
      {webhooks.isPending ? (
        <Loading label="Loading webhooks" />
      ) : webhooks.error ? (
        <ErrorState error={webhooks.error} retry={() => webhooks.refetch()} />
      ) : webhooks.data.total === 0 ? (
        <EmptyState title="No endpoints yet">Add one to have call and campaign events sent to your systems.</EmptyState>
      ) : (
        <>
          <ScrollTable label="Webhook endpoints" minWidth={640} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Endpoint</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Events</Table.Th>
                <Table.Th>Failures in a row</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {webhooks.data.webhooks.map((webhook) => (
                <Table.Tr key={webhook.id}>
                  <Table.Td maw={320}>
                    <Anchor component={Link} to={`/settings/webhooks/${webhook.id}`} style={{ wordBreak: 'break-all' }}>
                      {webhook.url}
                    </Anchor>
                    {webhook.description && (
                      <Text size="xs" c="dimmed">
                        {webhook.description}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <WebhookState webhook={webhook} />
                    {webhook.disabledReason && (
                      <Text size="xs" c="red.9">
                        {webhook.disabledReason}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">
                      {webhook.events.length === WEBHOOK_EVENT_TYPES.length ? 'every event' : webhook.events.join(', ')}
                    </Text>
                  </Table.Td>
                  <Table.Td>{webhook.failureStreak}</Table.Td>
                  <Table.Td>{formatDateTime(webhook.createdAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <ListFooter
            total={webhooks.data.total}
            noun="endpoint"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => setParams({ page: String(value) })}
          />
        </>
      )}
    </>
  );
}
