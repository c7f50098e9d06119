/**
 * One campaign: start, pause, cancel; its live statistics (refreshed every few seconds while it runs, and at once on
 * its events); the abandon rate against the 3% the pace governor aims under and the 3.5% that pauses it; the
 * projected completion.
 */
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Group,
  Progress,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef } from 'react';
import { Link, useParams } from 'react-router';
import { api, type Schemas, unwrap } from '../../api/client';
import { useAccountEvents } from '../../api/stream';
import { formatDateTime, formatDuration, formatUsd, humanize } from '../../ui/format';
import { ErrorState, Loading, PageHeader } from '../../ui/states';
import { CAMPAIGN_COLORS } from './status';

type Campaign = Schemas['GetCampaignResponse'];
type Stats = Schemas['GetCampaignStatsResponse'];
type Rate = Schemas['CampaignAbandonRate'];

const POLL_MS = 3000;

const percent = (value: number) => value.toLocaleString(undefined, { style: 'percent', maximumFractionDigits: 2 });

/** A window's abandon rate against the governor's target and the rate that pauses the campaign (both from the API). */
function AbandonRate({ label, rate, target, pauseAt }: { label: string; rate: Rate; target: number; pauseAt: number }) {
  const color = rate.rate >= pauseAt ? 'red.9' : rate.rate >= target ? 'orange.9' : 'teal.9';
  // The bar's scale runs to 5%, so that both marks show.
  const scale = 0.05;
  return (
    <Stack gap={4}>
      <Group justify="space-between">
        <Text size="sm">{label}</Text>
        <Text size="sm" fw={700} c={color}>
          {percent(rate.rate)}{' '}
          <Text span size="xs" c="dimmed" fw={400}>
            ({rate.abandoned} of {rate.liveAnswered} answered)
          </Text>
        </Text>
      </Group>
      <div style={{ position: 'relative' }}>
        <Progress
          value={Math.min(100, (rate.rate / scale) * 100)}
          color={color}
          aria-label={`${label}: ${percent(rate.rate)} abandoned; the governor aims under ${percent(target)}, ${percent(pauseAt)} pauses the campaign`}
        />
        {[target, pauseAt].map((mark) => (
          <div
            key={mark}
            aria-hidden
            style={{
              position: 'absolute',
              top: -3,
              bottom: -3,
              left: `${(mark / scale) * 100}%`,
              borderLeft: `2px solid var(--mantine-color-${mark === pauseAt ? 'red' : 'orange'}-9)`,
            }}
          />
        ))}
      </div>
    </Stack>
  );
}

function StatsView({ stats }: { stats: Stats }) {
  const { counts, contacts, abandonRate } = stats;
  const done = contacts.total ? (contacts.finished / contacts.total) * 100 : 0;
  const figures: Array<[string, string]> = [
    ['Dialled', counts.dialed.toLocaleString()],
    ['Connected', counts.connected.toLocaleString()],
    ['Answered by a person', counts.liveAnswered.toLocaleString()],
    ['Voicemail', counts.voicemail.toLocaleString()],
    ['Busy', counts.busy.toLocaleString()],
    ['No answer', counts.noAnswer.toLocaleString()],
    ['Failed', counts.failed.toLocaleString()],
    ['Abandoned', counts.abandoned.toLocaleString()],
    ['Average talk', formatDuration(stats.avgTalkSeconds)],
    ['Cost', formatUsd(stats.costUsd)],
  ];
  const denials = Object.entries(stats.gateDenials).filter(([, n]) => n > 0);
  const dispositions = Object.entries(stats.dispositions);
  return (
    <Stack gap="lg">
      <Card withBorder>
        <Title order={2} size="h4" mb="sm">
          Progress
        </Title>
        <Progress value={done} size="lg" aria-label={`${contacts.finished} of ${contacts.total} contacts finished`} />
        <Group justify="space-between" mt="xs" wrap="wrap">
          <Text size="sm">
            {contacts.finished.toLocaleString()} of {contacts.total.toLocaleString()} contacts finished;{' '}
            {contacts.remaining.toLocaleString()} remaining ({contacts.dueNow.toLocaleString()} due now,{' '}
            {contacts.inCall.toLocaleString()} in a call)
          </Text>
          <Text size="sm">
            Projected completion:{' '}
            <strong>
              {stats.projectedCompletionAt
                ? formatDateTime(stats.projectedCompletionAt)
                : 'not known yet (no pace measured, or nothing left to call)'}
            </strong>
          </Text>
        </Group>
      </Card>
      <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }}>
        {figures.map(([label, value]) => (
          <Card key={label} withBorder padding="sm">
            <Text size="sm" c="dimmed">
              {label}
            </Text>
            <Text size="lg" fw={700}>
              {value}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          Abandon rate
        </Title>
        <Text size="sm" c="dimmed" mb="sm">
          Calls answered by a person and dropped before the agent spoke. The pace governor slows dialling to stay under{' '}
          {percent(abandonRate.governorTarget)} (orange mark); at {percent(abandonRate.threshold)} over 30 days (red
          mark) the campaign pauses itself for compliance. Pace now: {Math.round(abandonRate.paceFactor * 100)}% of the
          set rate.
        </Text>
        <Stack gap="md">
          <AbandonRate
            label="Last hour"
            rate={abandonRate.lastHour}
            target={abandonRate.governorTarget}
            pauseAt={abandonRate.threshold}
          />
          <AbandonRate
            label="Today"
            rate={abandonRate.today}
            target={abandonRate.governorTarget}
            pauseAt={abandonRate.threshold}
          />
          <AbandonRate
            label="Last 30 days"
            rate={abandonRate.last30Days}
            target={abandonRate.governorTarget}
            pauseAt={abandonRate.threshold}
          />
        </Stack>
      </Card>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Dials refused before dialling
          </Title>
          {denials.length === 0 ? (
            <Text c="dimmed">None.</Text>
          ) : (
            <Table>
              <Table.Tbody>
                {denials.map(([reason, n]) => (
                  <Table.Tr key={reason}>
                    <Table.Th scope="row">{humanize(reason)}</Table.Th>
                    <Table.Td>{n.toLocaleString()}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            Dispositions
          </Title>
          {dispositions.length === 0 ? (
            <Text c="dimmed">None yet.</Text>
          ) : (
            <Table>
              <Table.Tbody>
                {dispositions.map(([code, n]) => (
                  <Table.Tr key={code}>
                    <Table.Th scope="row">{humanize(code)}</Table.Th>
                    <Table.Td>{n.toLocaleString()}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Card>
      </SimpleGrid>
    </Stack>
  );
}

/** A pause detail as it reads: dates in local time, rates as percentages, the rest as given. */
function detailValue(value: unknown) {
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value)) return formatDateTime(value);
  if (typeof value === 'number' && value > 0 && value < 1) return percent(value);
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function PauseNotice({ campaign }: { campaign: Campaign }) {
  if (!campaign.pause) return null;
  const { reason, details } = campaign.pause;
  const text =
    reason === 'compliance'
      ? 'Paused for compliance: the abandon rate reached the limit. Find out why before you resume.'
      : reason === 'no_usable_number'
        ? 'Paused: none of its numbers can call now.'
        : 'Paused by hand.';
  const detailText = Object.entries(details)
    .map(([key, value]) => `${humanize(key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase())}: ${detailValue(value)}`)
    .join('; ');
  return (
    <Alert color={reason === 'manual' ? 'gray' : 'red'} mb="md" title="Paused">
      {text}
      {detailText && (
        <Text size="sm" mt={4}>
          {detailText}
        </Text>
      )}
    </Alert>
  );
}

export function Component() {
  const { id = '' } = useParams();
  const queryClient = useQueryClient();
  const campaign = useQuery({
    queryKey: ['campaign', id],
    queryFn: () => unwrap(api.GET('/v1/campaigns/{id}', { params: { path: { id } } })),
  });
  const running = campaign.data?.status === 'running';
  const stats = useQuery({
    queryKey: ['campaign-stats', id],
    queryFn: () => unwrap(api.GET('/v1/campaigns/{id}/stats', { params: { path: { id } } })),
    enabled: campaign.isSuccess,
    refetchInterval: running ? POLL_MS : false,
  });
  // A campaign event (started, paused for compliance) or a call event refreshes both, at most once a second.
  const lastRefresh = useRef(0);
  useAccountEvents((event) => {
    if (!running && !event.type.startsWith('campaign.')) return;
    if (Date.now() - lastRefresh.current < 1000) return;
    lastRefresh.current = Date.now();
    void queryClient.invalidateQueries({ queryKey: ['campaign', id] });
    void queryClient.invalidateQueries({ queryKey: ['campaign-stats', id] });
  });
  const act = useMutation({
    mutationFn: (action: 'start' | 'pause' | 'cancel') =>
      unwrap(
        action === 'start'
          ? api.POST('/v1/campaigns/{id}/start', { params: { path: { id } } })
          : action === 'pause'
            ? api.POST('/v1/campaigns/{id}/pause', { params: { path: { id } } })
            : api.POST('/v1/campaigns/{id}/cancel', { params: { path: { id } } }),
      ),
    onSuccess: (updated) => {
      queryClient.setQueryData(['campaign', id], updated);
      void queryClient.invalidateQueries({ queryKey: ['campaign-stats', id] });
      void queryClient.invalidateQueries({ queryKey: ['campaigns'] });
    },
  });
  const agent = useQuery({
    queryKey: ['agent', campaign.data?.agentId],
    queryFn: () => unwrap(api.GET('/v1/agents/{id}', { params: { path: { id: campaign.data?.agentId ?? '' } } })),
    enabled: Boolean(campaign.data?.agentId),
  });
  if (campaign.isPending) return <Loading label="Loading the campaign" />;
  if (campaign.error)
    return (
      <>
        <PageHeader title="Campaign" />
        <ErrorState error={campaign.error} retry={() => campaign.refetch()} />
      </>
    );
  const data = campaign.data;
  const canStart = data.status === 'draft' || data.status === 'paused';
  const canCancel = data.status === 'draft' || data.status === 'running' || data.status === 'paused';
  return (
    <>
      <PageHeader title={data.name}>
        <Badge color={CAMPAIGN_COLORS[data.status]} size="lg">
          {data.status}
        </Badge>
        {canStart && (
          <Button onClick={() => act.mutate('start')} loading={act.isPending && act.variables === 'start'}>
            {data.status === 'draft' ? 'Start' : 'Resume'}
          </Button>
        )}
        {running && (
          <Button
            color="orange.9"
            onClick={() => act.mutate('pause')}
            loading={act.isPending && act.variables === 'pause'}
          >
            Pause
          </Button>
        )}
        {canCancel && (
          <Button
            variant="default"
            onClick={() => {
              if (window.confirm('Cancel the campaign for good? Contacts not yet called will not be called.'))
                act.mutate('cancel');
            }}
            loading={act.isPending && act.variables === 'cancel'}
          >
            Cancel campaign
          </Button>
        )}
      </PageHeader>
      {act.error && <ErrorState error={act.error} title="The campaign did not change" />}
      <PauseNotice campaign={data} />
      <Text size="sm" c="dimmed" mb="md">
        Agent:{' '}
        <Anchor component={Link} to={`/agents/${data.agentId}`}>
          {agent.data?.name ?? data.agentId}
        </Anchor>
        {' · '}
        {data.callsPerMinute} dials a minute, {data.maxConcurrency} at once, {data.maxAttemptsPerContact} attempts per
        contact · {data.schedule.days.join(', ')} {data.schedule.start}–{data.schedule.end} local time · started{' '}
        {formatDateTime(data.startedAt)}
        {data.completedAt ? ` · completed ${formatDateTime(data.completedAt)}` : ''}
      </Text>
      {stats.isPending ? (
        <Loading label="Loading the statistics" />
      ) : stats.error ? (
        <ErrorState error={stats.error} retry={() => stats.refetch()} />
      ) : (
        <>
          {running && (
            <Text size="xs" c="dimmed" mb="xs" role="status">
              Live: refreshed every {POLL_MS / 1000} s while the campaign runs.
            </Text>
          )}
          <StatsView stats={stats.data} />
        </>
      )}
    </>
  );
}
