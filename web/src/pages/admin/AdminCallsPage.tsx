/**
 * The admin area: the calls of every account, newest first, with the filters the API takes (account, status,
 * direction, digits of a number), live calls refreshed while any is listed; and a test call with any account's agent.
 */
import { Anchor, Badge, Button, Group, NativeSelect, Paper, SimpleGrid, Table, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, fieldError, type Operations, unwrap } from '../../api/client';
import { formatDateTime, formatDuration, formatUsd, humanize, isLiveStatus, STATUS_COLORS } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { RequirePlatformAdmin } from './RequirePlatformAdmin';
import { ListFooter } from '../../ui/ListFooter';

type CallsQuery = NonNullable<Operations['listAdminCalls']['parameters']['query']>;
type Status = NonNullable<CallsQuery['status']>;
type Direction = NonNullable<CallsQuery['direction']>;
const STATUSES = [
  'queued',
  'dialing',
  'ringing',
  'connected',
  'completed',
  'failed',
  'busy',
  'no_answer',
] as const satisfies readonly Status[];
const DIRECTIONS = ['outbound', 'inbound'] as const satisfies readonly Direction[];
const PAGE_SIZE = 25;

function TestCall() {
  const navigate = useNavigate();
  const [search, setSearch] = useState('');
  const [agentId, setAgentId] = useState('');
  const [toNumber, setToNumber] = useState('');
  const q = search.trim().length >= 3 ? search.trim() : undefined;
  const agents = useQuery({
    queryKey: ['admin-agents', q],
    queryFn: () => unwrap(api.GET('/v1/admin/calls/_/agents', { params: { query: { q, limit: 100 } } })),
    placeholderData: keepPreviousData,
  });
  const place = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/admin/test-call', { body: { agentId, toNumber } })),
    onSuccess: (call) => navigate(`/admin/calls/${call.callId}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    place.mutate();
  };
  const choices = (agents.data?.agents ?? []).filter((agent) => !agent.deleted);
  return (
    <Paper withBorder p="md" mb="md" component="form" onSubmit={submit} aria-labelledby="admin-test-call-heading">
      <Title order={2} size="h4" id="admin-test-call-heading" mb="xs">
        Test call with any account's agent
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <TextInput
          label="Find an agent"
          description="3 letters or more of its name"
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
        />
        <NativeSelect
          label="Agent"
          required
          value={agentId}
          onChange={(e) => setAgentId(e.currentTarget.value)}
          error={agents.error ? agents.error.message : fieldError(place.error, 'body/agentId')}
          data={[
            { value: '', label: agents.isPending ? 'Loading…' : choices.length ? 'Choose an agent' : 'No agent found' },
            ...choices.map((agent) => ({ value: agent.id, label: `${agent.name} (${agent.accountName})` })),
          ]}
        />
        <TextInput
          label="Number to call"
          description="E.164, e.g. +14155550123"
          required
          value={toNumber}
          onChange={(e) => setToNumber(e.currentTarget.value)}
          error={fieldError(place.error, 'body/toNumber')}
        />
      </SimpleGrid>
      <FormError error={place.error} fields={['body/agentId', 'body/toNumber']} />
      <Group mt="md">
        <Button type="submit" loading={place.isPending} disabled={!agentId}>
          Place the test call
        </Button>
      </Group>
    </Paper>
  );
}

function Calls() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const accountId = params.get('accountId') || undefined;
  const status = (params.get('status') || undefined) as Status | undefined;
  const direction = (params.get('direction') || undefined) as Direction | undefined;
  const q = params.get('q') || undefined;
  const [digits, setDigits] = useState(q ?? '');
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    next.delete('page');
    setParams(next, { replace: true });
  };
  const accounts = useQuery({
    queryKey: ['admin-accounts'],
    queryFn: () => unwrap(api.GET('/v1/admin/calls/_/accounts', { params: { query: { limit: 500 } } })),
  });
  const calls = useQuery({
    queryKey: ['admin-calls', page, accountId, status, direction, q],
    queryFn: () =>
      unwrap(
        api.GET('/v1/admin/calls', {
          params: {
            query: { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE, accountId, status, direction, q },
          },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.calls.some((call) => isLiveStatus(call.status)) ? 3000 : false),
  });
  const applyDigits = (event: FormEvent) => {
    event.preventDefault();
    setFilter('q', digits.trim());
  };
  return (
    <>
      <Title order={2} size="h4" mb="xs">
        Calls of every account
      </Title>
      <Group align="flex-end" mb="md" wrap="wrap">
        <NativeSelect
          label="Account"
          value={accountId ?? ''}
          onChange={(e) => setFilter('accountId', e.currentTarget.value)}
          error={accounts.error ? accounts.error.message : undefined}
          data={[
            { value: '', label: 'Every account' },
            ...(accounts.data?.accounts ?? []).map((account) => ({ value: account.id, label: account.name })),
          ]}
        />
        <NativeSelect
          label="Status"
          value={status ?? ''}
          onChange={(e) => setFilter('status', e.currentTarget.value)}
          data={[{ value: '', label: 'Any status' }, ...STATUSES.map((s) => ({ value: s, label: humanize(s) }))]}
        />
        <NativeSelect
          label="Direction"
          value={direction ?? ''}
          onChange={(e) => setFilter('direction', e.currentTarget.value)}
          data={[{ value: '', label: 'Both' }, ...DIRECTIONS]}
        />
        <Group component="form" onSubmit={applyDigits} align="flex-end" gap="xs" wrap="nowrap">
          <TextInput
            label="Number digits"
            value={digits}
            onChange={(e) => setDigits(e.currentTarget.value)}
            error={fieldError(calls.error, 'querystring/q')}
          />
          <Button type="submit" variant="default">
            Filter
          </Button>
        </Group>
      </Group>
      {calls.isPending ? (
        <Loading label="Loading calls" />
      ) : calls.error ? (
        <ErrorState error={calls.error} retry={() => calls.refetch()} />
      ) : calls.data.total === 0 ? (
        <EmptyState title="No calls">
          {accountId || status || direction || q ? 'None matches these filters.' : 'No account has made a call yet.'}
        </EmptyState>
      ) : (
        <>
          <ScrollTable label="Calls of every account" minWidth={820} striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Created</Table.Th>
                <Table.Th>Account</Table.Th>
                <Table.Th>Agent</Table.Th>
                <Table.Th>From → to</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Duration</Table.Th>
                <Table.Th>Cost</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {calls.data.calls.map((call) => (
                <Table.Tr key={call.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/admin/calls/${call.id}`}>
                      {formatDateTime(call.createdAt)}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{call.accountName}</Table.Td>
                  <Table.Td>{call.agentName ?? '—'}</Table.Td>
                  <Table.Td>
                    {call.fromNumber ?? '—'} → {call.toNumber ?? '—'}
                  </Table.Td>
                  <Table.Td>
                    <Badge color={STATUS_COLORS[call.status]}>{humanize(call.status)}</Badge>
                  </Table.Td>
                  <Table.Td>{formatDuration(call.durationSeconds)}</Table.Td>
                  <Table.Td>{formatUsd(call.totalCostUsd)}</Table.Td>
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

export function Component() {
  return (
    <RequirePlatformAdmin>
      <PageHeader title="Admin: calls" />
      <TestCall />
      <Calls />
    </RequirePlatformAdmin>
  );
}
