/**
 * The account's phone numbers: the agent each routes inbound calls to (changed here), and its reputation from the
 * last 24 hours of outbound calls (checked when it is older than an hour, or on demand); a number can be released.
 */
import { Anchor, Badge, Button, Group, NativeSelect, Table, Text, Tooltip } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { formatDateTime, formatUsd, humanize } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, Loading, PageHeader } from '../../ui/states';
import { ListFooter } from '../../ui/ListFooter';

type PhoneNumber = Schemas['PhoneNumber'];
type Reputation = Schemas['NumberReputation'];
const PAGE_SIZE = 25;
const LABEL_COLORS: Record<string, string> = { clean: 'teal.9', at_risk: 'orange.9', spam_likely: 'red.9' };

function ReputationCell({ reputation }: { reputation: Omit<Reputation, 'phoneNumberId' | 'number'> | null }) {
  if (!reputation) return <Text c="dimmed">not checked yet</Text>;
  return (
    <Tooltip
      label={`${reputation.calls24h} calls, ${reputation.answeredCalls24h} answered, ${reputation.shortCalls24h} under 10 s in 24 h; checked ${formatDateTime(reputation.checkedAt)}`}
    >
      <Group
        gap={6}
        wrap="nowrap"
        tabIndex={0}
        aria-label={`Reputation ${reputation.score} of 100, ${humanize(reputation.label)}`}
      >
        <Badge color={LABEL_COLORS[reputation.label]}>{humanize(reputation.label)}</Badge>
        <Text size="sm">
          {reputation.score}/100
          {reputation.answerRate !== null ? `, ${Math.round(reputation.answerRate * 100)}% answered` : ''}
        </Text>
      </Group>
    </Tooltip>
  );
}

function AgentPicker({ number, agents }: { number: PhoneNumber; agents: Schemas['Agent'][] }) {
  const queryClient = useQueryClient();
  const assign = useMutation({
    mutationFn: (agentId: string | null) =>
      unwrap(api.PATCH('/v1/phone-numbers/{id}', { params: { path: { id: number.id } }, body: { agentId } })),
    // Giving an agent this number frees the one it had: every row may change.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['phone-numbers'] }),
  });
  const known = agents.some((agent) => agent.id === number.agentId);
  return (
    <NativeSelect
      aria-label={`Agent for ${number.number}`}
      value={number.agentId ?? ''}
      disabled={assign.isPending}
      onChange={(e) => assign.mutate(e.currentTarget.value || null)}
      data={[
        { value: '', label: 'No agent' },
        ...(number.agentId && !known ? [{ value: number.agentId, label: 'An agent not listed' }] : []),
        ...agents.map((agent) => ({ value: agent.id, label: agent.name })),
      ]}
      error={assign.error ? assign.error.message : undefined}
    />
  );
}

export function Component() {
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const paging = { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE };
  const numbers = useQuery({
    queryKey: ['phone-numbers', page],
    queryFn: () => unwrap(api.GET('/v1/phone-numbers', { params: { query: paging } })),
    placeholderData: keepPreviousData,
  });
  // Read separately: it makes the checks that are missing or older than an hour.
  const reputations = useQuery({
    queryKey: ['phone-numbers', 'reputation', page],
    queryFn: () => unwrap(api.GET('/v1/phone-numbers/reputation', { params: { query: paging } })),
    enabled: numbers.isSuccess && numbers.data.total > 0,
  });
  const agents = useQuery({
    queryKey: ['agents', 'choices'],
    queryFn: () => unwrap(api.GET('/v1/agents', { params: { query: { limit: 500 } } })),
  });
  const recheck = useMutation({
    mutationFn: (id: string) =>
      unwrap(api.POST('/v1/phone-numbers/{id}/recheck-reputation', { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['phone-numbers'] }),
  });
  const release = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/phone-numbers/{id}', { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['phone-numbers'] }),
  });
  const byId = new Map((reputations.data?.reputations ?? []).map((r) => [r.phoneNumberId, r]));
  const buyButton = (
    <Button component={Link} to="/numbers/buy">
      Buy a number
    </Button>
  );
  const failed = numbers.error ?? agents.error;
  return (
    <>
      <PageHeader title="Phone numbers">{buyButton}</PageHeader>
      {recheck.error && <ErrorState error={recheck.error} title="Not checked" />}
      {release.error && <ErrorState error={release.error} title="Not released" />}
      {failed ? (
        <ErrorState
          error={failed}
          retry={() => {
            void numbers.refetch();
            void agents.refetch();
          }}
        />
      ) : !numbers.data || !agents.data ? (
        <Loading label="Loading phone numbers" />
      ) : numbers.data.total === 0 ? (
        <EmptyState title="No phone numbers yet" action={buyButton}>
          Agents call from your numbers, and take the calls made to them.
        </EmptyState>
      ) : (
        <>
          <ScrollTable label="Phone numbers" minWidth={760} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Number</Table.Th>
                <Table.Th>Inbound calls go to</Table.Th>
                <Table.Th>Reputation</Table.Th>
                <Table.Th>Source</Table.Th>
                <Table.Th>Monthly</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {numbers.data.phoneNumbers.map((number) => (
                <Table.Tr key={number.id}>
                  <Table.Td>
                    <Text fw={600}>{number.number}</Text>
                    <Text size="xs" c="dimmed">
                      {number.country}
                      {number.areaCode ? ` · area ${number.areaCode}` : ''} · {number.capabilities.join(', ')}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <AgentPicker number={number} agents={agents.data.agents} />
                    {number.agentId && (
                      <Anchor component={Link} to={`/agents/${number.agentId}`} size="xs">
                        Open the agent
                      </Anchor>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <ReputationCell reputation={byId.get(number.id) ?? number.reputation} />
                  </Table.Td>
                  <Table.Td>{number.source === 'byo' ? 'your own' : 'bought here'}</Table.Td>
                  <Table.Td>{formatUsd(number.monthlyFeeUsd)}</Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button
                        size="xs"
                        variant="default"
                        aria-label={`Check now: reputation of ${number.number}`}
                        loading={recheck.isPending && recheck.variables === number.id}
                        onClick={() => recheck.mutate(number.id)}
                      >
                        Check now
                      </Button>
                      <Button
                        size="xs"
                        variant="subtle"
                        color="red"
                        aria-label={`Release ${number.number}`}
                        loading={release.isPending && release.variables === number.id}
                        onClick={() => {
                          if (window.confirm(`Release ${number.number}? Calls to it will no longer reach an agent.`))
                            release.mutate(number.id);
                        }}
                      >
                        Release
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </ScrollTable>
          {reputations.error && <ErrorState error={reputations.error} title="The reputation could not be read" />}
          <ListFooter
            total={numbers.data.total}
            noun="number"
            pageSize={PAGE_SIZE}
            page={page}
            onPage={(value) => setParams({ page: String(value) })}
          />
        </>
      )}
    </>
  );
}
