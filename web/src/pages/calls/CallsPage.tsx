/**
 * The account's calls, newest first, with every filter of GET /v1/calls (kept in the address, so a filtered list
 * can be shared or bookmarked) and paging. The list refreshes as calls change (the account's event stream).
 */
import { Anchor, Badge, Button, Group, Select, SimpleGrid, Table, Text, TextInput } from '@mantine/core';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef } from 'react';
import { Link, type LoaderFunctionArgs, useSearchParams } from 'react-router';
import { api, type Operations, type Schemas, unwrap } from '../../api/client';
import { useAccountEvents } from '../../api/stream';
import { formatDateTime, formatDuration, formatUsd, humanize, isLiveStatus, STATUS_COLORS } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, Loading, PageHeader } from '../../ui/states';
import { ListFooter } from '../../ui/ListFooter';

type Query = NonNullable<Operations['listCalls']['parameters']['query']>;
type Status = NonNullable<Query['status']>;
const STATUSES: Status[] = ['completed', 'failed', 'busy', 'no_answer', 'connected', 'dialing', 'ringing'];
const PAGE_SIZE = 25;

/** A date field (yyyy-mm-dd, local) as the instant its day starts; `dayAfter` for the exclusive upper bound. */
function dayStart(date: string | null, dayAfter = false): string | undefined {
  if (!date) return undefined;
  const start = new Date(`${date}T00:00:00`);
  if (Number.isNaN(start.getTime())) return undefined;
  if (dayAfter) start.setDate(start.getDate() + 1);
  return start.toISOString();
}

function callee(call: Schemas['Call']) {
  const name = [call.contactFirstName, call.contactLastName].filter(Boolean).join(' ');
  return name || call.contactPhone || '—';
}

/** The list request the address asks for. */
function listQuery(params: URLSearchParams) {
  const page = Math.max(1, Number(params.get('page')) || 1);
  const get = (key: string) => params.get(key) || undefined;
  const hasRecording = params.get('hasRecording');
  return {
    limit: PAGE_SIZE,
    offset: (page - 1) * PAGE_SIZE,
    status: STATUSES.find((s) => s === params.get('status')),
    agentId: get('agentId'),
    campaignId: get('campaignId'),
    contactId: get('contactId'),
    hasRecording: hasRecording === 'true' || hasRecording === 'false' ? hasRecording : undefined,
    dateFrom: dayStart(params.get('from')),
    dateTo: dayStart(params.get('to'), true),
  } satisfies Query;
}

const fetchCalls = (query: Query) => unwrap(api.GET('/v1/calls', { params: { query } }));

/**
 * The list request, started by the route as soon as this page's code is loaded: beside the session check instead
 * of after it and the first render. The page's query takes it over if it asks for the same list soon after.
 */
let early: { key: string; at: number; calls: ReturnType<typeof fetchCalls> } | null = null;

export function loader({ request }: LoaderFunctionArgs) {
  const query = listQuery(new URL(request.url).searchParams);
  const calls = fetchCalls(query);
  calls.catch(() => undefined); // a failure is the page query's to show, if it takes the request over
  early = { key: JSON.stringify(query), at: Date.now(), calls };
  return null;
}

function takeEarly(query: Query) {
  const taken = early;
  early = null;
  return taken && taken.key === JSON.stringify(query) && Date.now() - taken.at < 5000 ? taken.calls : null;
}

export function Component() {
  const [params, setParams] = useSearchParams();
  const queryClient = useQueryClient();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const get = (key: string) => params.get(key) || undefined;
  const query = listQuery(params);
  const status = query.status;
  const calls = useQuery({
    queryKey: ['calls', query],
    queryFn: () => takeEarly(query) ?? fetchCalls(query),
    placeholderData: keepPreviousData,
  });
  const agents = useQuery({
    queryKey: ['agents', 'all'],
    queryFn: () => unwrap(api.GET('/v1/agents', { params: { query: { limit: 500 } } })),
  });
  const campaigns = useQuery({
    queryKey: ['campaigns', 'all'],
    queryFn: () => unwrap(api.GET('/v1/campaigns', { params: { query: { limit: 500 } } })),
  });

  // Live: a call event refreshes the list, at most once a second.
  const lastRefresh = useRef(0);
  useAccountEvents(() => {
    if (Date.now() - lastRefresh.current < 1000) return;
    lastRefresh.current = Date.now();
    void queryClient.invalidateQueries({ queryKey: ['calls'] });
  });

  const setFilter = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete('page');
    setParams(next);
  };

  return (
    <>
      <PageHeader title="Calls">
        <Button component={Link} to="/test-call" variant="light">
          Test call
        </Button>
      </PageHeader>
      <form aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <SimpleGrid cols={{ base: 1, xs: 2, md: 3, lg: 6 }} mb="md">
          <Select
            label="Status"
            placeholder="Any"
            clearable
            data={STATUSES.map((s) => ({ value: s, label: humanize(s) }))}
            value={status ?? null}
            onChange={(v) => setFilter('status', v)}
          />
          <Select
            label="Agent"
            placeholder="Any"
            clearable
            searchable
            data={(agents.data?.agents ?? []).map((a) => ({ value: a.id, label: a.name }))}
            value={get('agentId') ?? null}
            onChange={(v) => setFilter('agentId', v)}
          />
          <Select
            label="Campaign"
            placeholder="Any"
            clearable
            searchable
            data={(campaigns.data?.campaigns ?? []).map((c) => ({ value: c.id, label: c.name }))}
            value={get('campaignId') ?? null}
            onChange={(v) => setFilter('campaignId', v)}
          />
          <Select
            label="Recording"
            placeholder="Any"
            clearable
            data={[
              { value: 'true', label: 'With a recording' },
              { value: 'false', label: 'Without' },
            ]}
            value={query.hasRecording ?? null}
            onChange={(v) => setFilter('hasRecording', v)}
          />
          <TextInput
            label="From (day)"
            type="date"
            value={params.get('from') ?? ''}
            onChange={(e) => setFilter('from', e.currentTarget.value)}
          />
          <TextInput
            label="To (day, included)"
            type="date"
            value={params.get('to') ?? ''}
            onChange={(e) => setFilter('to', e.currentTarget.value)}
          />
        </SimpleGrid>
        {query.contactId && (
          <Group mb="md" gap="xs">
            <Text size="sm">One contact's calls.</Text>
            <Button size="xs" variant="subtle" onClick={() => setFilter('contactId', null)}>
              Show every contact
            </Button>
          </Group>
        )}
      </form>
      {calls.isPending ? (
        <Loading label="Loading calls" />
      ) : calls.error ? (
        <ErrorState error={calls.error} retry={() => calls.refetch()} />
      ) : calls.data.total === 0 ? (
        <EmptyState
          title={params.size > 0 ? 'No call matches these filters' : 'No calls yet'}
          action={
            <Button component={Link} to="/test-call">
              Make a test call
            </Button>
          }
        />
      ) : (
        <>
          <ScrollTable label="Calls" minWidth={720} striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Who</Table.Th>
                <Table.Th>Agent</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Duration</Table.Th>
                <Table.Th>Cost</Table.Th>
                <Table.Th>Disposition</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {calls.data.calls.map((call) => (
                <Table.Tr key={call.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/calls/${call.id}`}>
                      {formatDateTime(call.createdAt)}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{callee(call)}</Table.Td>
                  <Table.Td>{call.agentName ?? '—'}</Table.Td>
                  <Table.Td>
                    <Badge color={STATUS_COLORS[call.status]} variant={isLiveStatus(call.status) ? 'dot' : 'filled'}>
                      {humanize(call.status)}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{formatDuration(call.durationSeconds)}</Table.Td>
                  <Table.Td>{formatUsd(call.totalCostUsd)}</Table.Td>
                  <Table.Td>{call.disposition ? humanize(call.disposition) : '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          <ListFooter
            total={calls.data.total}
            noun="call"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => {
              const next = new URLSearchParams(params);
              next.set('page', String(value));
              setParams(next);
            }}
          />
        </>
      )}
    </>
  );
}
