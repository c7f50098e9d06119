/**
 * Any account's call, for a platform administrator: its transcript (refreshed while the call is live), its costs,
 * and the controls of a live call: have the agent say a text next, or hang up.
 */
import { Badge, Button, Group, Paper, SimpleGrid, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useParams } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { formatDateTime, formatDuration, formatUsd, humanize, isLiveStatus, STATUS_COLORS } from '../../ui/format';
import { ScrollTable } from '../../ui/ScrollTable';
import { EmptyState, ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { RequirePlatformAdmin } from './RequirePlatformAdmin';

type AdminCall = Schemas['GetAdminCallResponse'];

function Controls({ call }: { call: AdminCall }) {
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['admin-call', call.id] });
  const path = { params: { path: { id: call.id } } };
  const inject = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/admin/calls/{id}/inject', { ...path, body: { text } })),
    onSuccess: () => {
      setText('');
      void refresh();
    },
  });
  const hangup = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/admin/calls/{id}/hangup', path)),
    onSuccess: () => void refresh(),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    inject.mutate();
  };
  return (
    <Paper withBorder p="md" mt="md" aria-labelledby="controls-heading">
      <Title order={2} size="h4" id="controls-heading" mb="xs">
        Control the live call
      </Title>
      <form onSubmit={submit}>
        <Textarea
          label="Have the agent say next"
          description="Word for word, on its next turn (a connected call only)"
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          error={fieldError(inject.error, 'body/text')}
          maxLength={1000}
          autosize
          minRows={2}
        />
        <FormError error={inject.error} fields={['body/text']} />
        <Group mt="sm" wrap="wrap">
          <Button type="submit" loading={inject.isPending} disabled={!text.trim()}>
            Say it
          </Button>
          <Button color="red" variant="light" onClick={() => hangup.mutate()} loading={hangup.isPending}>
            Hang up
          </Button>
        </Group>
      </form>
      {inject.isSuccess && (
        <Text size="sm" role="status" mt="xs">
          Sent: the agent says it on its next turn.
        </Text>
      )}
      {hangup.isSuccess && (
        <Text size="sm" role="status" mt="xs">
          The call ends in a moment.
        </Text>
      )}
      {hangup.error && <ErrorState error={hangup.error} title="Not hung up" />}
    </Paper>
  );
}

function Call({ id }: { id: string }) {
  const call = useQuery({
    queryKey: ['admin-call', id],
    queryFn: () => unwrap(api.GET('/v1/admin/calls/{id}', { params: { path: { id } } })),
    refetchInterval: (query) => (query.state.data && isLiveStatus(query.state.data.status) ? 1000 : false),
  });
  if (call.isPending) return <Loading label="Loading the call" />;
  if (call.error) return <ErrorState error={call.error} retry={() => call.refetch()} />;
  const data = call.data;
  const live = isLiveStatus(data.status);
  return (
    <>
      <PageHeader title={`Call of ${data.accountName}`} />
      <Paper withBorder p="md">
        <SimpleGrid cols={{ base: 1, sm: 3 }}>
          <Stack gap={2}>
            <Text size="xs" c="dimmed">
              Status
            </Text>
            <Group gap="xs">
              <Badge color={STATUS_COLORS[data.status]}>{humanize(data.status)}</Badge>
              {data.endReason && <Text size="sm">{humanize(data.endReason)}</Text>}
            </Group>
          </Stack>
          <Stack gap={2}>
            <Text size="xs" c="dimmed">
              Agent · numbers
            </Text>
            <Text size="sm">
              {data.agentName ?? '—'} · {data.fromNumber ?? '—'} → {data.toNumber ?? '—'}
            </Text>
          </Stack>
          <Stack gap={2}>
            <Text size="xs" c="dimmed">
              Created · duration · cost
            </Text>
            <Text size="sm">
              {formatDateTime(data.createdAt)} · {formatDuration(data.durationSeconds)} · {formatUsd(data.totalCostUsd)}
            </Text>
          </Stack>
        </SimpleGrid>
      </Paper>
      {live && <Controls call={data} />}
      <Paper withBorder p="md" mt="md">
        <Title order={2} size="h4" mb="xs">
          Transcript
        </Title>
        {data.transcript.length === 0 ? (
          <EmptyState title={live ? 'Nothing said yet' : 'No transcript'}>
            {live ? 'Turns appear here as they are spoken.' : undefined}
          </EmptyState>
        ) : (
          <Stack gap="xs" aria-live="polite">
            {data.transcript.map((turn) => (
              <Text key={turn.seq} size="sm">
                <Text span fw={700}>
                  {turn.speaker}:
                </Text>{' '}
                {turn.text}
              </Text>
            ))}
          </Stack>
        )}
      </Paper>
      {data.costItems.length > 0 && (
        <Paper withBorder p="md" mt="md">
          <Title order={2} size="h4" mb="xs">
            Costs
          </Title>
          <ScrollTable label="Cost items" minWidth={420}>
            <Table.Tbody>
              {data.costItems.map((item) => (
                <Table.Tr key={item.id}>
                  <Table.Td>{item.description}</Table.Td>
                  <Table.Td ta="right">{formatUsd(item.amountUsd)}</Table.Td>
                </Table.Tr>
              ))}
              <Table.Tr>
                <Table.Td fw={700}>Total</Table.Td>
                <Table.Td ta="right" fw={700}>
                  {formatUsd(data.totalCostUsd)}
                </Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </ScrollTable>
        </Paper>
      )}
    </>
  );
}

export function Component() {
  const { id = '' } = useParams();
  return (
    <RequirePlatformAdmin>
      <Call id={id} />
    </RequirePlatformAdmin>
  );
}
