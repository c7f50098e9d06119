/**
 * A test call from the browser: pick an active agent, a number to call from (buy one if the account has none) and
 * who to call; the call page then shows it live. Whoever is called becomes a contact (a list "Test calls"),
 * since calls go to contacts. On the simulated network the number's last digit decides what happens.
 */
import { Alert, Anchor, Button, Card, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, fieldError, unwrap } from '../api/client';
import { ErrorState, FormError, Loading, PageHeader } from '../ui/states';

const TEST_LIST = 'Test calls';

class CalleeError extends Error {}

/** The contact with this number: found, or imported into the test list. */
async function contactFor(phone: string, name: string): Promise<string> {
  const find = async () =>
    (await unwrap(api.GET('/v1/contacts', { params: { query: { phone, limit: 1 } } }))).contacts[0]?.id;
  const found = await find();
  if (found) return found;
  const cell = (value: string) => `"${value.replaceAll('"', '""')}"`;
  const csv = `phone,first_name\n${cell(phone)},${cell(name)}\n`;
  const imported = await unwrap(
    api.POST('/v1/contact-lists', {
      params: { query: { name: TEST_LIST, defaultCountry: 'US', duplicatePolicy: 'skip' } },
      body: csv,
      bodySerializer: (body) => body,
      headers: { 'content-type': 'text/csv' },
    }),
  );
  // Sent without Prefer: respond-async, so the answer is the import's report (a 202 only answers that header).
  const rowError = 'errors' in imported ? imported.errors[0] : undefined;
  if (rowError) throw new CalleeError(rowError.message);
  const id = await find();
  if (!id) throw new CalleeError('The number could not be added as a contact');
  return id;
}

export function Component() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [agentId, setAgentId] = useState<string | null>(params.get('agent'));
  const [fromNumberId, setFromNumberId] = useState<string | null>(null);
  const [phone, setPhone] = useState('+14155550100');
  const [name, setName] = useState('Test');
  const [areaCode, setAreaCode] = useState('415');

  const agents = useQuery({
    queryKey: ['agents', 'active'],
    queryFn: () => unwrap(api.GET('/v1/agents', { params: { query: { status: 'active', limit: 100 } } })),
  });
  const numbers = useQuery({
    queryKey: ['phone-numbers'],
    queryFn: () => unwrap(api.GET('/v1/phone-numbers', { params: { query: { limit: 100 } } })),
  });
  const buy = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/v1/phone-numbers/inventory/purchase', { body: { country: 'US', areaCode: areaCode.trim() } })),
    onSuccess: (number) => {
      setFromNumberId(number.id);
      void queryClient.invalidateQueries({ queryKey: ['phone-numbers'] });
    },
  });
  const place = useMutation({
    mutationFn: async () => {
      if (!agentId) throw new CalleeError('Pick an agent');
      const contactId = await contactFor(phone.trim(), name.trim() || 'Test');
      return unwrap(
        api.POST('/v1/crm/contacts/{id}/call', {
          params: { path: { id: contactId } },
          body: { agentId, ...(fromNumberId ? { fromNumberId } : {}) },
        }),
      );
    },
    onSuccess: (placed) => navigate(`/calls/${placed.callId}`),
  });

  if (agents.isPending || numbers.isPending) return <Loading label="Loading agents and numbers" />;
  if (agents.error || numbers.error)
    return (
      <ErrorState
        error={agents.error ?? numbers.error}
        retry={() => {
          void agents.refetch();
          void numbers.refetch();
        }}
      />
    );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    place.mutate();
  };
  const calleeError = place.error instanceof CalleeError ? place.error.message : undefined;
  return (
    <>
      <PageHeader title="Test call" />
      <Card withBorder maw={640}>
        <form onSubmit={submit}>
          <Stack gap="sm">
            {agents.data.total === 0 ? (
              <Alert color="yellow" title="No active agent">
                Only an active agent places calls.{' '}
                <Anchor component={Link} to="/agents">
                  Activate one
                </Anchor>{' '}
                or{' '}
                <Anchor component={Link} to="/agents/new">
                  create one
                </Anchor>
                .
              </Alert>
            ) : (
              <Select
                label="Agent"
                required
                placeholder="Pick an active agent"
                data={agents.data.agents.map((agent) => ({ value: agent.id, label: agent.name }))}
                value={agentId}
                onChange={setAgentId}
                error={fieldError(place.error, 'body/agentId')}
              />
            )}
            {numbers.data.total === 0 ? (
              <Alert color="yellow" title="No number to call from">
                <Stack gap="xs" align="flex-start">
                  <Text size="sm">Calls go out from one of the account's numbers.</Text>
                  <Group align="flex-end" gap="sm">
                    <TextInput
                      label="Area code"
                      size="xs"
                      w={110}
                      value={areaCode}
                      onChange={(e) => setAreaCode(e.currentTarget.value)}
                      error={fieldError(buy.error, 'body/areaCode')}
                    />
                    <Button size="xs" onClick={() => buy.mutate()} loading={buy.isPending}>
                      Buy a US number
                    </Button>
                  </Group>
                  <FormError error={buy.error} fields={['body/areaCode']} title="Not bought" />
                </Stack>
              </Alert>
            ) : (
              <Select
                label="Call from"
                placeholder="Any of the account's numbers"
                clearable
                data={numbers.data.phoneNumbers.map((n) => ({ value: n.id, label: n.number }))}
                value={fromNumberId}
                onChange={setFromNumberId}
                error={fieldError(place.error, 'body/fromNumberId')}
              />
            )}
            <TextInput
              label="Number to call"
              description="On the simulated network the last digit decides: 0–4 a person answers, 5 voicemail, 6 busy, 7 no answer, 8 failed, 9 hangs up early."
              type="tel"
              required
              value={phone}
              onChange={(e) => setPhone(e.currentTarget.value)}
              error={calleeError}
            />
            <TextInput label="Their name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
            {!calleeError && <FormError error={place.error} fields={['body/agentId', 'body/fromNumberId']} />}
            <Group>
              <Button
                type="submit"
                loading={place.isPending}
                disabled={agents.data.total === 0 || numbers.data.total === 0}
              >
                Call
              </Button>
            </Group>
          </Stack>
        </form>
      </Card>
    </>
  );
}
