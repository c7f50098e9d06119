/**
 * The wizard's other path: describe the business and the goal, and the API drafts a whole agent (the configured
 * model, or the built-in generator adapting the closest template). Nothing is saved until "Create this agent".
 */
import { Accordion, Alert, Button, Group, List, Select, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { FormError } from '../../ui/states';
import { PARTS } from './parts';

type Request = Schemas['GenerateAgentDefinitionRequest'];
type Draft = Schemas['GenerateAgentDefinitionResponse'];
type Tone = NonNullable<Request['tone']>;

const TONES = ['warm', 'professional', 'upbeat', 'calm'] as const satisfies readonly Tone[];
const FIELDS = ['body/businessDescription', 'body/goal', 'body/tone', 'body/language'];

function DraftReview({ draft }: { draft: Draft }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [name, setName] = useState(draft.definition.name);
  const create = useMutation({
    mutationFn: () => {
      const { definition } = draft;
      return unwrap(api.POST('/v1/agents', { body: { ...definition, name: name.trim() } }));
    },
    onSuccess: async (agent) => {
      await queryClient.invalidateQueries({ queryKey: ['agents'] });
      navigate(`/agents/${agent.id}`);
    },
  });
  const { generator, safety } = draft;
  const errors = safety.findings.filter((finding) => finding.severity === 'error').length;
  return (
    <form
      aria-label="The drafted agent"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate();
      }}
    >
      <Stack gap="sm">
        <Title order={3} size="h4">
          The draft
        </Title>
        <Text size="sm">
          {generator.kind === 'llm'
            ? `Written by the model ${generator.model ?? ''}.`
            : `Adapted from the ${generator.templateId ?? 'closest'} template by the built-in generator: review its details, they are the template's defaults.`}{' '}
          {generator.fallbackReason && `The model was not used: ${generator.fallbackReason}.`}
        </Text>
        <Alert color={safety.result === 'pass' ? 'teal' : 'red'} role="status" title="Safety check">
          {safety.result === 'pass' ? 'Passed' : 'Failed'}: {errors} error(s), {safety.findings.length - errors}{' '}
          warning(s).
          {safety.findings.length > 0 && (
            <List size="sm" mt="xs">
              {safety.findings.map((finding, i) => (
                <List.Item key={i}>
                  {finding.part && `${finding.part}: `}
                  {finding.message}
                </List.Item>
              ))}
            </List>
          )}
        </Alert>
        <Accordion variant="contained" multiple>
          {PARTS.filter(([part]) => draft.definition[part]).map(([part, label]) => (
            <Accordion.Item key={part} value={part}>
              <Accordion.Control>{label}</Accordion.Control>
              <Accordion.Panel>
                <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
                  {draft.definition[part]}
                </Text>
              </Accordion.Panel>
            </Accordion.Item>
          ))}
        </Accordion>
        <TextInput
          label="Agent name"
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(create.error, 'body/name')}
        />
        <Text size="sm" c="dimmed">
          The agent is saved as a draft; every part can be edited on its page.
        </Text>
        <FormError error={create.error} fields={['body/name']} title="Not created" />
        <Group>
          <Button type="submit" loading={create.isPending}>
            Create this agent
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function GenerateDraft() {
  const [form, setForm] = useState<{ businessDescription: string; goal: string; tone: Tone | null; language: string }>({
    businessDescription: '',
    goal: '',
    tone: null,
    language: '',
  });
  const generate = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/agents/wizard/generate', {
          body: {
            businessDescription: form.businessDescription,
            goal: form.goal,
            ...(form.tone ? { tone: form.tone } : {}),
            ...(form.language.trim() ? { language: form.language.trim() } : {}),
          },
        }),
      ),
  });
  return (
    <Stack gap="md">
      <form
        aria-label="Describe your business"
        onSubmit={(event) => {
          event.preventDefault();
          generate.mutate();
        }}
      >
        <Stack gap="sm" maw={720}>
          <Textarea
            label="Your business"
            description="What it does, who its customers are, anything the agent should know."
            autosize
            minRows={3}
            value={form.businessDescription}
            onChange={(e) => setForm({ ...form, businessDescription: e.currentTarget.value })}
            error={fieldError(generate.error, 'body/businessDescription')}
          />
          <TextInput
            label="The goal of its calls"
            value={form.goal}
            onChange={(e) => setForm({ ...form, goal: e.currentTarget.value })}
            error={fieldError(generate.error, 'body/goal')}
          />
          <Group grow align="flex-start" wrap="wrap">
            <Select
              label="Tone"
              data={[...TONES]}
              value={form.tone}
              onChange={(value) => setForm({ ...form, tone: value as Tone | null })}
              clearable
              miw={200}
            />
            <TextInput
              label="Language"
              description="e.g. English or es; blank for English"
              value={form.language}
              onChange={(e) => setForm({ ...form, language: e.currentTarget.value })}
              error={fieldError(generate.error, 'body/language')}
              miw={200}
            />
          </Group>
          <FormError error={generate.error} fields={FIELDS} title="Not drafted" />
          <Group>
            <Button type="submit" variant="default" loading={generate.isPending}>
              Draft an agent
            </Button>
          </Group>
        </Stack>
      </form>
      {generate.data && <DraftReview key={generate.submittedAt} draft={generate.data} />}
    </Stack>
  );
}
