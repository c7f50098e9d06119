/**
 * One call. While it runs: its status and transcript as they happen (the call's event stream). Once it has ended:
 * the recording with a two-channel waveform, the transcript following playback (the line being spoken is marked;
 * a line seeks there), the itemized costs and their total, the events, and the disposition (editable).
 */
import {
  Anchor,
  Badge,
  Button,
  Card,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { useCallStream } from '../../api/stream';
import {
  formatDateTime,
  formatDuration,
  formatMs,
  formatUsd,
  humanize,
  isLiveStatus,
  STATUS_COLORS,
} from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { Player, type PlayerHandle } from './Player';

type Turn = Schemas['TranscriptTurn'];
type Call = Schemas['CallDetail'];

const STATUS_BY_EVENT: Record<string, Call['status']> = {
  'call.queued': 'queued',
  'call.dialing': 'dialing',
  'call.ringing': 'ringing',
  'call.connected': 'connected',
  'call.completed': 'completed',
};

function Transcript({
  turns,
  nowMs,
  onSeek,
  live,
}: {
  turns: Turn[];
  nowMs: number | null;
  onSeek?: (ms: number) => void;
  live: boolean;
}) {
  const endRef = useRef<HTMLLIElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new turn is what scrolls the transcript
  useEffect(() => {
    if (live) endRef.current?.scrollIntoView?.({ block: 'nearest' });
  }, [live, turns.length]);
  if (turns.length === 0)
    return (
      <Text c="dimmed" size="sm">
        {live ? 'The transcript appears here as the call goes on.' : 'No transcript.'}
      </Text>
    );
  return (
    <ol
      aria-label="Transcript"
      aria-live={live ? 'polite' : undefined}
      style={{ listStyle: 'none', padding: 0, margin: 0 }}
    >
      {turns.map((turn) => {
        const speaking =
          nowMs !== null && turn.startMs !== null && turn.endMs !== null && nowMs >= turn.startMs && nowMs < turn.endMs;
        const line = (
          <Group gap="xs" wrap="nowrap" align="flex-start">
            <Text size="xs" c="dimmed" w={40} style={{ flexShrink: 0 }}>
              {formatMs(turn.startMs)}
            </Text>
            <Text
              size="sm"
              fw={600}
              w={56}
              style={{ flexShrink: 0 }}
              c={turn.speaker === 'agent' ? 'indigo.9' : 'teal.9'}
            >
              {turn.speaker === 'agent' ? 'Agent' : turn.speaker === 'caller' ? 'Them' : humanize(turn.speaker)}
            </Text>
            <Text size="sm">{turn.text}</Text>
          </Group>
        );
        return (
          <li
            key={turn.seq}
            data-seq={turn.seq}
            data-speaking={speaking || undefined}
            aria-current={speaking ? 'true' : undefined}
            style={{
              borderRadius: 6,
              background: speaking ? 'var(--mantine-color-yellow-1)' : undefined,
            }}
          >
            {onSeek && turn.startMs !== null ? (
              <UnstyledButton onClick={() => onSeek(turn.startMs ?? 0)} w="100%" p={4}>
                <span className="visually-hidden">Play from </span>
                {line}
              </UnstyledButton>
            ) : (
              <div style={{ padding: 4 }}>{line}</div>
            )}
          </li>
        );
      })}
      <li ref={endRef} aria-hidden="true" />
    </ol>
  );
}

function Costs({ call }: { call: Call }) {
  if (call.costItems.length === 0)
    return (
      <Text size="sm" c="dimmed">
        {isLiveStatus(call.status) ? 'Costs are added when the call ends.' : 'No costs.'}
      </Text>
    );
  return (
    <ScrollTable label="Cost items" minWidth={420}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Item</Table.Th>
          <Table.Th ta="right">Quantity</Table.Th>
          <Table.Th ta="right">Unit price</Table.Th>
          <Table.Th ta="right">Amount</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {call.costItems.map((item) => (
          <Table.Tr key={item.id}>
            <Table.Td>{item.description}</Table.Td>
            <Table.Td ta="right">
              {item.quantity} {humanize(item.unit)}
            </Table.Td>
            <Table.Td ta="right">{formatUsd(item.unitPriceUsd)}</Table.Td>
            <Table.Td ta="right">{formatUsd(item.amountUsd)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
      <Table.Tfoot>
        <Table.Tr>
          <Table.Th colSpan={3}>Total</Table.Th>
          <Table.Th ta="right">{formatUsd(call.totalCostUsd)}</Table.Th>
        </Table.Tr>
      </Table.Tfoot>
    </ScrollTable>
  );
}

function Disposition({ call }: { call: Call }) {
  const queryClient = useQueryClient();
  const [code, setCode] = useState<string | null>(call.disposition);
  useEffect(() => setCode(call.disposition), [call.disposition]);
  const codes = useQuery({
    queryKey: ['disposition-codes', 'active'],
    queryFn: () => unwrap(api.GET('/v1/disposition-codes', { params: { query: { active: 'true', limit: 500 } } })),
  });
  const save = useMutation({
    mutationFn: (disposition: string) =>
      unwrap(api.PATCH('/v1/calls/{id}/disposition', { params: { path: { id: call.id } }, body: { disposition } })),
    onSuccess: (saved) => queryClient.setQueryData(['call', call.id], saved),
  });
  if (codes.error) return <ErrorState error={codes.error} retry={() => codes.refetch()} />;
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        if (code) save.mutate(code);
      }}
    >
      <Group align="flex-end" gap="sm">
        <Select
          label="Disposition"
          placeholder={codes.isPending ? 'Loading codes…' : 'Pick a code'}
          data={(codes.data?.dispositionCodes ?? []).map((c) => ({ value: c.code, label: c.label }))}
          value={code}
          onChange={setCode}
          searchable
          error={fieldError(save.error, 'body/disposition')}
          w={260}
        />
        <Button type="submit" variant="default" disabled={!code || code === call.disposition} loading={save.isPending}>
          Save disposition
        </Button>
      </Group>
      <FormError error={save.error} fields={['body/disposition']} />
    </form>
  );
}

function Events({ callId, version }: { callId: string; version: string }) {
  const events = useQuery({
    queryKey: ['call-events', callId, version],
    queryFn: () =>
      unwrap(api.GET('/v1/calls/{id}/events', { params: { path: { id: callId }, query: { limit: 500 } } })),
  });
  if (events.isPending) return <Loading label="Loading events" />;
  if (events.error) return <ErrorState error={events.error} retry={() => events.refetch()} />;
  return (
    <ScrollTable label="Events" minWidth={420}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>When</Table.Th>
          <Table.Th>Event</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {events.data.events.map((event) => (
          <Table.Tr key={event.id}>
            <Table.Td>{new Date(event.occurredAt).toLocaleTimeString()}</Table.Td>
            <Table.Td>{event.type}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </ScrollTable>
  );
}

function Recording({ callId, turns }: { callId: string; turns: Turn[] }) {
  const player = useRef<PlayerHandle>(null);
  const [nowMs, setNowMs] = useState<number | null>(null);
  const url = useQuery({
    queryKey: ['recording-url', callId],
    queryFn: () =>
      unwrap(api.GET('/v1/calls/{id}/asset-url', { params: { path: { id: callId }, query: { asset: 'recording' } } })),
    staleTime: 10 * 60_000,
  });
  return (
    <Stack gap="md">
      {url.isPending ? (
        <Loading label="Loading the recording" />
      ) : url.error ? (
        <ErrorState error={url.error} retry={() => url.refetch()} />
      ) : (
        <Player ref={player} url={url.data.url} onTime={setNowMs} />
      )}
      <Transcript
        turns={turns}
        nowMs={nowMs}
        onSeek={url.data ? (ms) => player.current?.seek(ms) : undefined}
        live={false}
      />
    </Stack>
  );
}

export function Component() {
  const { id = '' } = useParams();
  const queryClient = useQueryClient();
  const call = useQuery({
    queryKey: ['call', id],
    queryFn: () => unwrap(api.GET('/v1/calls/{id}', { params: { path: { id } } })),
  });
  const live = call.data ? isLiveStatus(call.data.status) : false;
  const stream = useCallStream(id, live, () => {
    void queryClient.invalidateQueries({ queryKey: ['call', id] });
    void queryClient.invalidateQueries({ queryKey: ['calls'] });
  });

  /** The turns so far: those the call detail had, and each one the stream brought since. */
  const turns = useMemo(() => {
    const bySeq = new Map<number, Turn>();
    for (const turn of call.data?.transcript ?? []) bySeq.set(turn.seq, turn);
    for (const event of stream.events) {
      if (event.type !== 'call.turn') continue;
      const data = event.data as Partial<Turn> & { seq?: number };
      if (typeof data.seq === 'number' && typeof data.text === 'string')
        bySeq.set(data.seq, {
          seq: data.seq,
          speaker: data.speaker ?? 'agent',
          text: data.text,
          startMs: data.startMs ?? null,
          endMs: data.endMs ?? null,
        });
    }
    return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }, [call.data, stream.events]);

  if (call.isPending) return <Loading label="Loading the call" />;
  if (call.error) return <ErrorState error={call.error} retry={() => call.refetch()} />;
  const data = call.data;
  const lastStatus = [...stream.events]
    .reverse()
    .find((event) => STATUS_BY_EVENT[event.type] || event.type === 'call.failed');
  const status = live && lastStatus ? (STATUS_BY_EVENT[lastStatus.type] ?? 'failed') : data.status;
  const who = [data.contactFirstName, data.contactLastName].filter(Boolean).join(' ') || data.contactPhone || 'Call';
  const stillLive = isLiveStatus(status) || (live && stream.state !== 'ended');

  return (
    <>
      <PageHeader title={`Call with ${who}`}>
        <Badge color={STATUS_COLORS[status]} size="lg" variant={stillLive ? 'dot' : 'filled'} aria-live="polite">
          {humanize(status)}
        </Badge>
      </PageHeader>
      <Stack gap="lg">
        <SimpleGrid cols={{ base: 2, sm: 4 }}>
          {[
            [
              'Agent',
              data.agentId ? (
                <Anchor key="agent" component={Link} to={`/agents/${data.agentId}`}>
                  {data.agentName}
                </Anchor>
              ) : (
                '—'
              ),
            ],
            ['Number', data.toNumber ?? '—'],
            ['Started', formatDateTime(data.startedAt ?? data.createdAt)],
            ['Duration', formatDuration(data.durationSeconds)],
            ['Direction', data.direction],
            ['Ended because', data.endReason ? humanize(data.endReason) : '—'],
            ['Total cost', formatUsd(data.totalCostUsd)],
            ['Agent version', data.agentVersion ?? '—'],
          ].map(([label, value]) => (
            <div key={String(label)}>
              <Text size="xs" c="dimmed">
                {label}
              </Text>
              <Text size="sm">{value}</Text>
            </div>
          ))}
        </SimpleGrid>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {stillLive ? 'Live transcript' : data.recordingStorageKey ? 'Recording and transcript' : 'Transcript'}
          </Title>
          {stillLive || !data.recordingStorageKey ? (
            <>
              {stillLive && stream.state === 'failed' && (
                <ErrorState error={new Error('The live view was refused: reload the page.')} />
              )}
              <Transcript turns={turns} nowMs={null} live={stillLive} />
            </>
          ) : (
            <Recording callId={data.id} turns={turns} />
          )}
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Disposition
          </Title>
          <Disposition call={data} />
        </Card>
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              Costs
            </Title>
            <Costs call={data} />
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              Events
            </Title>
            <Events callId={data.id} version={`${data.updatedAt}-${stream.events.length}`} />
          </Card>
        </SimpleGrid>
      </Stack>
    </>
  );
}
