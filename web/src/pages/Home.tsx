/**
 * Home: the first-run checklist, each step read from the account's real state (an agent, an active agent, a number
 * to call from, a contact, a call), with the way to do the next one.
 */
import { Anchor, Badge, Card, List, Progress, SimpleGrid, Stack, Text, ThemeIcon } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { useMe } from '../api/session';
import { ErrorState, Loading, PageHeader } from '../ui/states';

function useFirstRunState() {
  return useQuery({
    queryKey: ['first-run'],
    queryFn: async () => {
      const [agents, active, numbers, contacts, calls] = await Promise.all([
        unwrap(api.GET('/v1/agents', { params: { query: { limit: 1 } } })),
        unwrap(api.GET('/v1/agents', { params: { query: { limit: 1, status: 'active' } } })),
        unwrap(api.GET('/v1/phone-numbers', { params: { query: { limit: 1 } } })),
        unwrap(api.GET('/v1/contacts', { params: { query: { limit: 1 } } })),
        unwrap(api.GET('/v1/calls', { params: { query: { limit: 1 } } })),
      ]);
      return {
        agents: agents.total,
        activeAgents: active.total,
        numbers: numbers.total,
        contacts: contacts.total,
        calls: calls.total,
      };
    },
  });
}

export function Component() {
  const me = useMe();
  const state = useFirstRunState();
  if (state.isPending) return <Loading label="Reading your account" />;
  if (state.error) return <ErrorState error={state.error} retry={() => state.refetch()} />;
  const s = state.data;
  const steps = [
    { done: s.agents > 0, label: 'Create an agent', hint: 'from a template, in a minute', to: '/agents/new' },
    {
      done: s.activeAgents > 0,
      label: 'Activate an agent',
      hint: 'only an active agent places calls',
      to: '/agents',
    },
    { done: s.numbers > 0, label: 'Get a number to call from', hint: 'the test call page buys one', to: '/test-call' },
    { done: s.calls > 0, label: 'Make a test call', hint: 'and watch its transcript live', to: '/test-call' },
  ];
  const done = steps.filter((step) => step.done).length;
  return (
    <>
      <PageHeader title={`Welcome${me.data?.user?.name ? `, ${me.data.user.name}` : ''}`} />
      <Stack gap="lg">
        <Card withBorder>
          <Stack gap="sm">
            <Text fw={600} id="checklist-title">
              Getting started: {done} of {steps.length} done
            </Text>
            <Progress.Root>
              <Progress.Section
                value={(done / steps.length) * 100}
                aria-label={`${done} of ${steps.length} steps done`}
              />
            </Progress.Root>
            <List spacing="xs" listStyleType="none" aria-labelledby="checklist-title">
              {steps.map((step) => (
                <List.Item
                  key={step.label}
                  icon={
                    <ThemeIcon size={22} radius="xl" color={step.done ? 'teal.9' : 'gray.7'} aria-hidden>
                      {step.done ? '✓' : '·'}
                    </ThemeIcon>
                  }
                >
                  {step.done ? (
                    <Text span>
                      {step.label} <Badge color="teal.9">done</Badge>
                    </Text>
                  ) : (
                    <Text span>
                      <Anchor component={Link} to={step.to}>
                        {step.label}
                      </Anchor>{' '}
                      <Text span c="dimmed" size="sm">
                        ({step.hint})
                      </Text>
                    </Text>
                  )}
                </List.Item>
              ))}
            </List>
          </Stack>
        </Card>
        <SimpleGrid cols={{ base: 2, sm: 4 }}>
          {[
            ['Agents', s.agents, '/agents'],
            ['Numbers', s.numbers, '/test-call'],
            ['Contacts', s.contacts, '/test-call'],
            ['Calls', s.calls, '/calls'],
          ].map(([label, count, to]) => (
            <Card key={label} withBorder component={Link} to={String(to)}>
              <Text size="sm" c="dimmed">
                {label}
              </Text>
              <Text fw={700} size="xl">
                {count}
              </Text>
            </Card>
          ))}
        </SimpleGrid>
      </Stack>
    </>
  );
}
