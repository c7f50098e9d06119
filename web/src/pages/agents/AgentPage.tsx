/**
 * The agent editor: a tab per prompt part and one for the settings, the safety check's findings beside the part and
 * line they concern, a PDF imported into the knowledge, and the version history with a line diff between any two
 * versions. Saving sends only what changed; the API answers the new version.
 */
import { Alert, Badge, Button, Code, List, Select, Stack, Tabs, Text, Textarea, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { STATUS_COLORS } from '../../ui/format';
import { ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { KnowledgeImport } from './KnowledgeImport';
import { type Part, PARTS } from './parts';
import { VersionsTab } from './VersionsTab';

type Agent = Schemas['AgentDetail'];
type Finding = Schemas['SafetyFinding'];
type Update = Schemas['UpdateAgentRequest'];

interface Draft {
  parts: Record<Part, string>;
  name: string;
  status: Agent['status'];
  voicemailAction: Agent['voicemail']['action'];
  voicemailMessage: string;
  transferNumber: string;
  whenToTransfer: string;
}

function draftOf(agent: Agent): Draft {
  return {
    parts: Object.fromEntries(PARTS.map(([part]) => [part, agent[part]])) as Record<Part, string>,
    name: agent.name,
    status: agent.status,
    voicemailAction: agent.voicemail.action,
    voicemailMessage: agent.voicemail.message,
    transferNumber: (agent.transfer as { number?: string | null }).number ?? '',
    whenToTransfer: (agent.transfer as { whenToTransfer?: string }).whenToTransfer ?? '',
  };
}

/** What changed between the saved agent and the draft, as an update body. */
function changes(agent: Agent, draft: Draft): Update {
  const saved = draftOf(agent);
  const update: Update = {};
  for (const [part] of PARTS) if (draft.parts[part] !== saved.parts[part]) update[part] = draft.parts[part];
  if (draft.name !== saved.name) update.name = draft.name;
  if (draft.status !== saved.status) update.status = draft.status;
  if (draft.voicemailAction !== saved.voicemailAction || draft.voicemailMessage !== saved.voicemailMessage)
    update.voicemail = { action: draft.voicemailAction, message: draft.voicemailMessage };
  if (draft.transferNumber !== saved.transferNumber || draft.whenToTransfer !== saved.whenToTransfer)
    update.transfer = { number: draft.transferNumber || null, whenToTransfer: draft.whenToTransfer };
  return update;
}

function Findings({ findings }: { findings: Finding[] }) {
  if (findings.length === 0) return null;
  return (
    <List spacing="xs" size="sm" aria-label="Safety findings">
      {findings.map((finding, i) => (
        <List.Item key={`${finding.code}-${finding.line}-${i}`}>
          <Badge
            color={finding.severity === 'error' ? 'red.9' : 'dark'}
            variant={finding.severity === 'error' ? 'filled' : 'outline'}
            mr="xs"
          >
            {finding.severity}
          </Badge>
          {finding.line !== null && (
            <Text span fw={600}>
              Line {finding.line}:{' '}
            </Text>
          )}
          {finding.message} {finding.excerpt && <Code>{finding.excerpt}</Code>}{' '}
          <Text span c="dimmed">
            {finding.suggestion}
          </Text>
        </List.Item>
      ))}
    </List>
  );
}

export function Component() {
  const { id = '' } = useParams();
  const queryClient = useQueryClient();
  const agent = useQuery({
    queryKey: ['agent', id],
    queryFn: () => unwrap(api.GET('/v1/agents/{id}', { params: { path: { id } } })),
  });
  const [draft, setDraft] = useState<Draft | null>(null);
  const [tab, setTab] = useState<string>('soul');
  const [restored, setRestored] = useState<number | null>(null);
  useEffect(() => {
    if (agent.data) setDraft(draftOf(agent.data));
  }, [agent.data]);
  const save = useMutation({
    mutationFn: (body: Update) => unwrap(api.PATCH('/v1/agents/{id}', { params: { path: { id } }, body })),
    onSuccess: (saved) => {
      queryClient.setQueryData(['agent', id], saved);
      void queryClient.invalidateQueries({ queryKey: ['agents'] });
      void queryClient.invalidateQueries({ queryKey: ['agent-versions', id] });
    },
  });
  const safety = useMutation({
    mutationFn: (current: Draft) =>
      unwrap(
        api.POST('/v1/agents/safety-check', {
          body: {
            agent: {
              ...current.parts,
              name: current.name,
              voicemail: { action: current.voicemailAction, message: current.voicemailMessage },
              transfer: { number: current.transferNumber || null, whenToTransfer: current.whenToTransfer },
            },
          },
        }),
      ),
  });
  const findingsByPart = useMemo(() => {
    const map = new Map<string, Finding[]>();
    for (const finding of safety.data?.findings ?? []) {
      const key = finding.part?.split('.')[0] ?? 'general';
      map.set(key, [...(map.get(key) ?? []), finding]);
    }
    return map;
  }, [safety.data]);

  if (agent.isPending || (agent.data && !draft)) return <Loading label="Loading the agent" />;
  if (agent.error) return <ErrorState error={agent.error} retry={() => agent.refetch()} />;
  if (!draft) return null;
  const pending = changes(agent.data, draft);
  const dirty = Object.keys(pending).length > 0;
  const setPart = (part: Part, value: string) => setDraft({ ...draft, parts: { ...draft.parts, [part]: value } });
  const countFor = (key: string) => findingsByPart.get(key)?.length ?? 0;

  return (
    <>
      <PageHeader title={agent.data.name}>
        <Badge color={STATUS_COLORS[agent.data.status]} size="lg">
          {agent.data.status}
        </Badge>
        <Text size="sm" c="dimmed">
          Version {agent.data.version}
        </Text>
        <Button variant="default" onClick={() => safety.mutate(draft)} loading={safety.isPending}>
          Check safety
        </Button>
        {dirty && (
          <Button
            variant="subtle"
            onClick={() => {
              setDraft(draftOf(agent.data));
              setRestored(null);
            }}
          >
            Discard changes
          </Button>
        )}
        <Button onClick={() => save.mutate(pending)} disabled={!dirty} loading={save.isPending}>
          Save
        </Button>
        {agent.data.status === 'active' && (
          <Button component={Link} to={`/test-call?agent=${agent.data.id}`} variant="light">
            Test call
          </Button>
        )}
      </PageHeader>
      <Stack gap="sm">
        <FormError error={save.error} fields={Object.keys(pending).map((key) => `body/${key}`)} />
        {save.isSuccess && !dirty && (
          <Alert color="teal" role="status">
            Saved: version {agent.data.version}.
          </Alert>
        )}
        {safety.error && <ErrorState error={safety.error} title="The safety check failed" />}
        {safety.data && (
          <Alert color={safety.data.result === 'pass' ? 'teal' : 'red'} role="status" title="Safety check">
            {safety.data.result === 'pass' ? 'Passed' : 'Failed'}: {safety.data.counts.error} error(s),{' '}
            {safety.data.counts.warning} warning(s). The findings are shown beside each part.
            <Findings findings={findingsByPart.get('general') ?? []} />
          </Alert>
        )}
        {restored !== null && dirty && (
          <Alert color="blue" role="status" title={`Version ${restored} is in the editor`}>
            Its prompt parts replace the ones shown: review them, then save to make them the newest version.
          </Alert>
        )}
        <Tabs value={tab} onChange={(value) => value && setTab(value)} keepMounted={false}>
          <Tabs.List aria-label="Agent parts">
            {PARTS.map(([part, label]) => (
              <Tabs.Tab key={part} value={part}>
                {label}
                {countFor(part) > 0 && (
                  <Badge size="xs" color="red.9" ml={4} aria-label={`${countFor(part)} findings`}>
                    {countFor(part)}
                  </Badge>
                )}
              </Tabs.Tab>
            ))}
            <Tabs.Tab value="settings">
              Settings
              {countFor('transfer') + countFor('voicemail') > 0 && (
                <Badge size="xs" color="red.9" ml={4}>
                  {countFor('transfer') + countFor('voicemail')}
                </Badge>
              )}
            </Tabs.Tab>
            <Tabs.Tab value="versions">Versions</Tabs.Tab>
          </Tabs.List>
          {PARTS.map(([part, label, help]) => (
            <Tabs.Panel key={part} value={part} pt="md">
              <Stack gap="sm">
                <Textarea
                  label={label}
                  description={help}
                  autosize
                  minRows={part === 'firstMessage' ? 2 : 8}
                  maxRows={30}
                  value={draft.parts[part]}
                  onChange={(e) => setPart(part, e.currentTarget.value)}
                  error={fieldError(save.error, `body/${part}`)}
                  styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
                />
                <Findings findings={findingsByPart.get(part) ?? []} />
                {part === 'knowledgeBase' && (
                  <KnowledgeImport
                    agentId={id}
                    blocked={
                      dirty ? 'Save or discard your changes first: an import saves a new version at once.' : null
                    }
                    onImported={() => {
                      void queryClient.invalidateQueries({ queryKey: ['agent', id] });
                      void queryClient.invalidateQueries({ queryKey: ['agent-versions', id] });
                    }}
                  />
                )}
              </Stack>
            </Tabs.Panel>
          ))}
          <Tabs.Panel value="settings" pt="md">
            <Stack gap="sm" maw={640}>
              <TextInput
                label="Name"
                value={draft.name}
                onChange={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
                error={fieldError(save.error, 'body/name')}
              />
              <Select
                label="Status"
                description="Only an active agent places and answers calls"
                data={['draft', 'active', 'paused']}
                value={draft.status}
                onChange={(value) => value && setDraft({ ...draft, status: value as Agent['status'] })}
                error={fieldError(save.error, 'body/status')}
                allowDeselect={false}
              />
              <Select
                label="At a voicemail"
                data={[
                  { value: 'hang_up', label: 'Hang up' },
                  { value: 'leave_message', label: 'Leave a message' },
                ]}
                value={draft.voicemailAction}
                onChange={(value) =>
                  value && setDraft({ ...draft, voicemailAction: value as Draft['voicemailAction'] })
                }
                allowDeselect={false}
              />
              <Textarea
                label="Voicemail message"
                autosize
                minRows={2}
                value={draft.voicemailMessage}
                onChange={(e) => setDraft({ ...draft, voicemailMessage: e.currentTarget.value })}
                error={fieldError(save.error, 'body/voicemail/message')}
              />
              <Findings findings={findingsByPart.get('voicemail') ?? []} />
              <TextInput
                label="Transfer to (E.164 number)"
                placeholder="+14155550123"
                value={draft.transferNumber}
                onChange={(e) => setDraft({ ...draft, transferNumber: e.currentTarget.value })}
                error={fieldError(save.error, 'body/transfer/number')}
              />
              <Textarea
                label="When to transfer"
                autosize
                minRows={2}
                value={draft.whenToTransfer}
                onChange={(e) => setDraft({ ...draft, whenToTransfer: e.currentTarget.value })}
                error={fieldError(save.error, 'body/transfer/whenToTransfer')}
              />
              <Findings findings={findingsByPart.get('transfer') ?? []} />
            </Stack>
          </Tabs.Panel>
          <Tabs.Panel value="versions" pt="md">
            <VersionsTab
              agentId={id}
              current={agent.data.version}
              onRestore={(version, parts) => {
                setDraft({
                  ...draft,
                  parts: Object.fromEntries(PARTS.map(([part]) => [part, parts[part]])) as Draft['parts'],
                });
                setRestored(version);
                setTab('soul');
              }}
            />
          </Tabs.Panel>
        </Tabs>
      </Stack>
    </>
  );
}
