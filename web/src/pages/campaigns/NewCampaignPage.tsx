/** A new campaign (a draft: nothing is dialled until it is started): agent, lists, numbers, pace, schedule. */
import {
  Anchor,
  Button,
  Card,
  Checkbox,
  Group,
  MultiSelect,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { ErrorState, FormError, Loading, PageHeader } from '../../ui/states';

type Body = Schemas['CreateCampaignRequest'];
type Day = Schemas['CampaignScheduleInput']['days'][number];
const DAYS = [
  ['mon', 'Monday'],
  ['tue', 'Tuesday'],
  ['wed', 'Wednesday'],
  ['thu', 'Thursday'],
  ['fri', 'Friday'],
  ['sat', 'Saturday'],
  ['sun', 'Sunday'],
] as const satisfies ReadonlyArray<readonly [Day, string]>;
const VOICEMAIL = [
  { value: 'hang_up', label: 'Hang up' },
  { value: 'leave_message', label: 'Leave a message' },
] satisfies Array<{ value: NonNullable<Body['voicemailAction']>; label: string }>;
const isDay = (value: string): value is Day => DAYS.some(([day]) => day === value);

/** What the form chooses from: the account's agents, lists and numbers (first 500 of each). */
function useChoices() {
  const agents = useQuery({
    queryKey: ['agents', 'choices'],
    queryFn: () => unwrap(api.GET('/v1/agents', { params: { query: { limit: 500 } } })),
  });
  const lists = useQuery({
    queryKey: ['contact-lists', 'choices'],
    queryFn: () => unwrap(api.GET('/v1/contact-lists', { params: { query: { limit: 500 } } })),
  });
  const numbers = useQuery({
    queryKey: ['phone-numbers', 'choices'],
    queryFn: () => unwrap(api.GET('/v1/phone-numbers', { params: { query: { limit: 500 } } })),
  });
  return { agents, lists, numbers };
}

export function Component() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { agents, lists, numbers } = useChoices();
  const [name, setName] = useState('');
  const [agentId, setAgentId] = useState<string | null>(null);
  const [listIds, setListIds] = useState<string[]>([]);
  const [numberIds, setNumberIds] = useState<string[]>([]);
  const [concurrency, setConcurrency] = useState<number | string>(5);
  const [perMinute, setPerMinute] = useState<number | string>(30);
  const [attempts, setAttempts] = useState<number | string>(3);
  const [voicemail, setVoicemail] = useState<NonNullable<Body['voicemailAction']>>('hang_up');
  const [days, setDays] = useState<Day[]>(['mon', 'tue', 'wed', 'thu', 'fri', 'sat']);
  const [start, setStart] = useState('09:00');
  const [agentMissing, setAgentMissing] = useState(false);
  const [end, setEnd] = useState('20:00');
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/campaigns', {
          body: {
            name: name.trim(),
            agentId: agentId ?? '',
            contactListIds: listIds,
            fromNumberIds: numberIds,
            maxConcurrency: Number(concurrency),
            callsPerMinute: Number(perMinute),
            maxAttemptsPerContact: Number(attempts),
            voicemailAction: voicemail,
            schedule: { days, start, end },
          },
        }),
      ),
    onSuccess: async (campaign) => {
      await queryClient.invalidateQueries({ queryKey: ['campaigns'] });
      navigate(`/campaigns/${campaign.id}`);
    },
  });
  const failed = [agents, lists, numbers].find((query) => query.error);
  if (failed?.error) return <ErrorState error={failed.error} retry={() => failed.refetch()} />;
  if (!agents.data || !lists.data || !numbers.data) return <Loading label="Loading agents, lists and numbers" />;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setAgentMissing(agentId === null);
    if (agentId !== null) create.mutate();
  };
  const error = (field: string) => fieldError(create.error, `body/${field}`);
  const fields = [
    'name',
    'agentId',
    'contactListIds',
    'fromNumberIds',
    'maxConcurrency',
    'callsPerMinute',
    'maxAttemptsPerContact',
    'voicemailAction',
    'schedule',
    'schedule/days',
    'schedule/start',
    'schedule/end',
  ].map((field) => `body/${field}`);
  return (
    <>
      <PageHeader title="New campaign" />
      {(agents.data.total === 0 || lists.data.total === 0) && (
        <Text mb="md">
          A campaign needs an agent and a contact list:{' '}
          {agents.data.total === 0 && (
            <Anchor component={Link} to="/agents/new">
              create an agent
            </Anchor>
          )}
          {agents.data.total === 0 && lists.data.total === 0 && ' and '}
          {lists.data.total === 0 && (
            <Anchor component={Link} to="/contacts/import">
              import a contact list
            </Anchor>
          )}
          .
        </Text>
      )}
      <form onSubmit={submit} aria-label="New campaign">
        <Stack gap="lg">
          <Card withBorder>
            <Stack gap="sm">
              <TextInput
                label="Name"
                required
                value={name}
                onChange={(e) => setName(e.currentTarget.value)}
                error={error('name')}
              />
              <Select
                label="Agent"
                description="Only an active agent makes calls"
                withAsterisk
                searchable
                data={agents.data.agents.map((agent) => ({
                  value: agent.id,
                  label: `${agent.name} (${agent.status})`,
                }))}
                value={agentId}
                onChange={(value) => {
                  setAgentId(value);
                  setAgentMissing(false);
                }}
                error={agentMissing ? 'Choose the agent that makes the calls' : error('agentId')}
              />
              <MultiSelect
                label="Contact lists"
                description="Their contacts are called; the lists are read when the campaign first starts"
                withAsterisk
                searchable
                data={lists.data.contactLists.map((list) => ({
                  value: list.id,
                  label: `${list.name} (${list.counts.rows.toLocaleString()} rows)`,
                }))}
                value={listIds}
                onChange={setListIds}
                error={error('contactListIds')}
              />
              <MultiSelect
                label="Numbers to call from"
                description="Used in turn; none chosen: the account's best number"
                searchable
                data={numbers.data.phoneNumbers.map((number) => ({ value: number.id, label: number.number }))}
                value={numberIds}
                onChange={setNumberIds}
                error={error('fromNumberIds')}
              />
            </Stack>
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              Pace
            </Title>
            <SimpleGrid cols={{ base: 1, sm: 3 }}>
              <NumberInput
                label="Calls at once"
                min={1}
                max={1000}
                value={concurrency}
                onChange={setConcurrency}
                error={error('maxConcurrency')}
              />
              <NumberInput
                label="Dials a minute"
                min={1}
                max={10000}
                value={perMinute}
                onChange={setPerMinute}
                error={error('callsPerMinute')}
              />
              <NumberInput
                label="Attempts per contact"
                min={1}
                max={20}
                value={attempts}
                onChange={setAttempts}
                error={error('maxAttemptsPerContact')}
              />
            </SimpleGrid>
            <Select
              mt="sm"
              label="On voicemail"
              data={VOICEMAIL}
              value={voicemail}
              allowDeselect={false}
              onChange={(value) => setVoicemail(value === 'leave_message' ? 'leave_message' : 'hang_up')}
              error={error('voicemailAction')}
              maw={320}
            />
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              Schedule
            </Title>
            <Text size="sm" c="dimmed" mb="sm">
              In each contact's local time. Calls never go before 08:00 or after 21:00 local time, whatever the schedule
              says.
            </Text>
            <Checkbox.Group
              label="Days"
              value={days}
              onChange={(values) => setDays(values.filter(isDay))}
              error={error('schedule/days') ?? error('schedule')}
            >
              <Group mt="xs" gap="md">
                {DAYS.map(([value, label]) => (
                  <Checkbox key={value} value={value} label={label} />
                ))}
              </Group>
            </Checkbox.Group>
            <SimpleGrid cols={{ base: 2, sm: 4 }} mt="sm">
              <TextInput
                label="From"
                type="time"
                value={start}
                onChange={(e) => setStart(e.currentTarget.value)}
                error={error('schedule/start')}
              />
              <TextInput
                label="Until"
                type="time"
                value={end}
                onChange={(e) => setEnd(e.currentTarget.value)}
                error={error('schedule/end')}
              />
            </SimpleGrid>
          </Card>
          <FormError error={create.error} fields={fields} />
          <Group>
            <Button type="submit" loading={create.isPending}>
              Create campaign
            </Button>
            <Text size="sm" c="dimmed">
              It is saved as a draft: nothing is dialled until you start it.
            </Text>
          </Group>
        </Stack>
      </form>
    </>
  );
}
