/**
 * One webhook endpoint: its state and why it was disabled (re-enable it), a test event, a new signing secret (shown
 * once), and the delivery log with every attempt of each delivery (send one again). The log refreshes itself while
 * a delivery is still pending.
 */
import {
  Accordion,
  Badge,
  Button,
  Group,
  Modal,
  NativeSelect,
  Pagination,
  Paper,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { api, fieldError, type Operations, type Schemas, unwrap } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { ShownOnce } from '../settings/ShownOnce';
import { WEBHOOK_EVENT_TYPES } from './events';
import { WebhookState } from './WebhooksPage';

type Delivery = Schemas['GetWebhookDeliveryResponse'];
type DeliveriesQuery = NonNullable<Operations['listWebhookDeliveries']['parameters']['query']>;
type DeliveryState = NonNullable<DeliveriesQuery['state']>;
const DELIVERY_STATES = ['pending', 'succeeded', 'failed', 'abandoned'] as const satisfies readonly DeliveryState[];
const STATE_COLORS: Record<DeliveryState, string> = {
  pending: 'blue.8',
  succeeded: 'teal.9',
  failed: 'orange.9',
  abandoned: 'red.9',
};
const PAGE_SIZE = 20;

function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <Text size="sm">No attempt yet.</Text>;
  return (
    <ScrollTable label={`Attempts of delivery ${delivery.id}`} minWidth={560}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>#</Table.Th>
          <Table.Th>Started</Table.Th>
          <Table.Th>Answer</Table.Th>
          <Table.Th>Took</Table.Th>
          <Table.Th>Response body</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {delivery.attempts.map((attempt) => (
          <Table.Tr key={attempt.number}>
            <Table.Td>{attempt.number}</Table.Td>
            <Table.Td>{formatDateTime(attempt.startedAt)}</Table.Td>
            <Table.Td>
              {attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : ''}
              {attempt.error && (
                <Text size="sm" c="red.9">
                  {attempt.error}
                </Text>
              )}
              {attempt.statusCode === null && !attempt.error && !attempt.finishedAt && 'in flight'}
            </Table.Td>
            <Table.Td>{attempt.latencyMs !== null ? `${attempt.latencyMs} ms` : '—'}</Table.Td>
            <Table.Td>
              <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }} lineClamp={3}>
                {attempt.responseBody || '—'}
              </Text>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </ScrollTable>
  );
}

function Redeliver({ delivery }: { delivery: Delivery }) {
  const queryClient = useQueryClient();
  const redeliver = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', {
          params: { path: { id: delivery.webhookId, deliveryId: delivery.id } },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', delivery.webhookId] }),
  });
  return (
    <Stack gap={4}>
      <Group>
        <Button
          size="xs"
          variant="light"
          onClick={() => redeliver.mutate()}
          loading={redeliver.isPending}
          disabled={delivery.state === 'pending'}
        >
          Send again
        </Button>
      </Group>
      {redeliver.error && <ErrorState error={redeliver.error} title="Not sent again" />}
    </Stack>
  );
}

/** Every failed or abandoned delivery created since a time, sent again (after the receiver was fixed). */
function RedeliverSince({ webhookId }: { webhookId: string }) {
  const queryClient = useQueryClient();
  const [since, setSince] = useState('');
  const redeliver = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/webhooks/{id}/deliveries/redeliver', {
          params: { path: { id: webhookId } },
          body: { since: new Date(since).toISOString() },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', webhookId] }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    redeliver.mutate();
  };
  return (
    <form onSubmit={submit} style={{ marginBottom: 'var(--mantine-spacing-md)' }}>
      <Group align="flex-end" wrap="wrap" gap="xs">
        <TextInput
          type="datetime-local"
          label="Failed deliveries since"
          value={since}
          onChange={(e) => setSince(e.currentTarget.value)}
          error={fieldError(redeliver.error, 'body/since')}
          required
        />
        <Button type="submit" variant="default" loading={redeliver.isPending} disabled={!since}>
          Send them again
        </Button>
      </Group>
      {redeliver.data && (
        <Text size="sm" role="status" mt="xs">
          {redeliver.data.redelivered} deliver{redeliver.data.redelivered === 1 ? 'y' : 'ies'} sent again.
        </Text>
      )}
      <FormError error={redeliver.error} fields={['body/since']} />
    </form>
  );
}

function DeliveryLog({ webhookId }: { webhookId: string }) {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const state = (params.get('state') || undefined) as DeliveryState | undefined;
  const eventType = (params.get('eventType') || undefined) as DeliveriesQuery['eventType'];
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    next.delete('page');
    setParams(next, { replace: true });
  };
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', webhookId, page, state, eventType],
    queryFn: () =>
      unwrap(
        api.GET('/v1/webhooks/{id}/deliveries', {
          params: {
            path: { id: webhookId },
            query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE, state, eventType },
          },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: (query) =>
      query.state.data?.deliveries.some((delivery) => delivery.state === 'pending') ? 2000 : false,
  });
  return (
    <Paper withBorder p="md" mt="md">
      <Title order={2} size="h4" mb="sm">
        Delivery log
      </Title>
      <Group mb="sm" wrap="wrap">
        <NativeSelect
          label="State"
          value={state ?? ''}
          onChange={(e) => setFilter('state', e.currentTarget.value)}
          data={[{ value: '', label: 'Any state' }, ...DELIVERY_STATES]}
        />
        <NativeSelect
          label="Event type"
          value={eventType ?? ''}
          onChange={(e) => setFilter('eventType', e.currentTarget.value)}
          data={[{ value: '', label: 'Any event' }, ...WEBHOOK_EVENT_TYPES, 'webhook.test']}
        />
      </Group>
      <RedeliverSince webhookId={webhookId} />
      {deliveries.isPending ? (
        <Loading label="Loading deliveries" />
      ) : deliveries.error ? (
        <ErrorState error={deliveries.error} retry={() => deliveries.refetch()} />
      ) : deliveries.data.total === 0 ? (
        <EmptyState title="No deliveries">
          {state || eventType ? 'None matches these filters.' : 'Send a test event to see one here.'}
        </EmptyState>
      ) : (
        <>
          <Accordion multiple variant="separated" aria-label="Deliveries">
            {deliveries.data.deliveries.map((delivery) => (
              <Accordion.Item key={delivery.id} value={delivery.id}>
                <Accordion.Control>
                  <Group gap="sm" wrap="wrap">
                    <Badge color={STATE_COLORS[delivery.state]}>{delivery.state}</Badge>
                    <Text size="sm" fw={600}>
                      {delivery.eventType}
                    </Text>
                    <Text size="sm" c="dimmed">
                      {formatDateTime(delivery.occurredAt)} · {delivery.attempts.length} attempt
                      {delivery.attempts.length === 1 ? '' : 's'}
                      {delivery.nextAttemptAt ? ` · next ${formatDateTime(delivery.nextAttemptAt)}` : ''}
                    </Text>
                  </Group>
                </Accordion.Control>
                <Accordion.Panel>
                  <Stack gap="sm">
                    <Text size="xs" c="dimmed">
                      Delivery {delivery.id}
                      {delivery.eventId ? ` · event ${delivery.eventId}` : ''}
                    </Text>
                    <Attempts delivery={delivery} />
                    <Redeliver delivery={delivery} />
                  </Stack>
                </Accordion.Panel>
              </Accordion.Item>
            ))}
          </Accordion>
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              {deliveries.data.total} deliver{deliveries.data.total === 1 ? 'y' : 'ies'}
            </Text>
            <Pagination
              total={Math.ceil(deliveries.data.total / PAGE_SIZE)}
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
    </Paper>
  );
}

function Actions({ webhook }: { webhook: Schemas['GetWebhookResponse'] }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | null>(null);
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ['webhooks'] });
    void queryClient.invalidateQueries({ queryKey: ['webhook', webhook.id] });
  };
  const path = { params: { path: { id: webhook.id } } };
  const test = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/webhooks/{id}/test', path)),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', webhook.id] }),
  });
  const setEnabled = useMutation({
    mutationFn: (enabled: boolean) => unwrap(api.PATCH('/v1/webhooks/{id}', { ...path, body: { enabled } })),
    onSuccess: refresh,
  });
  const rotate = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/webhooks/{id}/rotate-secret', path)),
    onSuccess: () => {
      setConfirm(null);
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/webhooks/{id}', path)),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['webhooks'] });
      navigate('/settings/webhooks', { replace: true });
    },
  });
  const failed = test.error ?? setEnabled.error;
  return (
    <>
      <Group gap="sm" wrap="wrap">
        <Button onClick={() => test.mutate()} loading={test.isPending} disabled={!webhook.enabled}>
          Send a test event
        </Button>
        {webhook.enabled ? (
          <Button variant="default" onClick={() => setEnabled.mutate(false)} loading={setEnabled.isPending}>
            Disable
          </Button>
        ) : (
          <Button color="teal.9" onClick={() => setEnabled.mutate(true)} loading={setEnabled.isPending}>
            Enable again
          </Button>
        )}
        <Button variant="default" onClick={() => setConfirm('rotate')}>
          Rotate the secret
        </Button>
        <Button color="red" variant="light" onClick={() => setConfirm('delete')}>
          Delete
        </Button>
      </Group>
      {test.isSuccess && (
        <Text size="sm" role="status" mt="xs">
          A test event is queued: it appears in the delivery log below.
        </Text>
      )}
      {failed && <ErrorState error={failed} title="Not done" />}
      {rotate.data && (
        <ShownOnce
          title={`The new signing secret (the old one also signs until ${formatDateTime(
            rotate.data.previousSecretValidUntil,
          )})`}
          label="Signing secret"
          value={rotate.data.secret}
          onDone={() => rotate.reset()}
        />
      )}
      <Modal opened={confirm === 'rotate'} onClose={() => setConfirm(null)} title="Rotate the signing secret?">
        <Stack>
          <Text size="sm">
            A new secret signs every delivery from now on; the old one keeps signing beside it for a while, so your
            receiver can switch over.
          </Text>
          {rotate.error && <ErrorState error={rotate.error} title="Not rotated" />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirm(null)}>
              Cancel
            </Button>
            <Button onClick={() => rotate.mutate()} loading={rotate.isPending}>
              Rotate
            </Button>
          </Group>
        </Stack>
      </Modal>
      <Modal opened={confirm === 'delete'} onClose={() => setConfirm(null)} title="Delete this endpoint?">
        <Stack>
          <Text size="sm">Its pending deliveries are not sent, and no more events go to it.</Text>
          {remove.error && <ErrorState error={remove.error} title="Not deleted" />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirm(null)}>
              Cancel
            </Button>
            <Button color="red" onClick={() => remove.mutate()} loading={remove.isPending}>
              Delete the endpoint
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

export function Component() {
  const { id = '' } = useParams();
  const webhook = useQuery({
    queryKey: ['webhook', id],
    queryFn: () => unwrap(api.GET('/v1/webhooks/{id}', { params: { path: { id } } })),
  });
  if (webhook.isPending) return <Loading label="Loading the endpoint" />;
  if (webhook.error) return <ErrorState error={webhook.error} retry={() => webhook.refetch()} />;
  const data = webhook.data;
  return (
    <>
      <PageHeader title="Webhook endpoint" />
      <Paper withBorder p="md">
        <Stack gap="xs">
          <Text fw={600} style={{ wordBreak: 'break-all' }}>
            {data.url}
          </Text>
          {data.description && <Text size="sm">{data.description}</Text>}
          <Group gap="sm" wrap="wrap">
            <WebhookState webhook={data} />
            <Text size="sm" c="dimmed">
              {data.failureStreak} failed attempt{data.failureStreak === 1 ? '' : 's'} in a row · events:{' '}
              {data.events.join(', ')}
            </Text>
          </Group>
          {!data.enabled && (
            <Text size="sm" c={data.disabledReason ? 'red.9' : undefined}>
              {data.disabledReason
                ? `Disabled automatically ${formatDateTime(data.disabledAt)}: ${data.disabledReason}`
                : 'Disabled by hand.'}
            </Text>
          )}
          {data.secretRotatedUntil && (
            <Text size="sm" c="dimmed">
              The previous secret still signs until {formatDateTime(data.secretRotatedUntil)}.
            </Text>
          )}
          <Actions webhook={data} />
        </Stack>
      </Paper>
      <DeliveryLog webhookId={id} />
    </>
  );
}
