/** A new agent: through the wizard (questions one at a time), from a template (its blanks in a form), or blank. */
import {
  Button,
  Card,
  Checkbox,
  Group,
  Radio,
  Select,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, fieldError, unwrap } from '../../api/client';
import { ErrorState, FormError, Loading, PageHeader } from '../../ui/states';

function TemplateForm({ templateId }: { templateId: string }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const template = useQuery({
    queryKey: ['agent-template', templateId],
    queryFn: () => unwrap(api.GET('/v1/agent-templates/{id}', { params: { path: { id: templateId } } })),
  });
  const [name, setName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/agents/from-template', {
          body: {
            templateId,
            variables: Object.fromEntries(Object.entries(values).filter(([, value]) => value !== '')),
            ...(name.trim() ? { overrides: { name: name.trim() } } : {}),
          },
        }),
      ),
    onSuccess: async (agent) => {
      await queryClient.invalidateQueries({ queryKey: ['agents'] });
      navigate(`/agents/${agent.id}`);
    },
  });
  if (template.isPending) return <Loading label="Loading the template" />;
  if (template.error) return <ErrorState error={template.error} retry={() => template.refetch()} />;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const fields = ['body/overrides/name', ...template.data.variables.map((v) => `body/variables/${v.key}`)];
  return (
    <form onSubmit={submit} aria-label={`Create from ${template.data.name}`}>
      <Stack gap="sm">
        <TextInput
          label="Agent name"
          description={`Leave empty for "${template.data.name}"`}
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(create.error, 'body/overrides/name')}
        />
        {template.data.variables.map((variable) => {
          const common = {
            label: variable.label,
            description: variable.help || (variable.default ? `Default: ${variable.default}` : undefined),
            required: variable.required,
            error: fieldError(create.error, `body/variables/${variable.key}`),
          };
          const value = values[variable.key] ?? '';
          const set = (next: string) => setValues((v) => ({ ...v, [variable.key]: next }));
          if (variable.type === 'select' && variable.options)
            return (
              <Select
                key={variable.key}
                {...common}
                data={variable.options}
                value={value || null}
                onChange={(v) => set(v ?? '')}
              />
            );
          if (variable.type === 'boolean')
            return (
              <Checkbox
                key={variable.key}
                label={variable.label}
                description={variable.help}
                checked={value === 'true'}
                onChange={(e) => set(e.currentTarget.checked ? 'true' : 'false')}
              />
            );
          if (variable.type === 'longtext')
            return (
              <Textarea
                key={variable.key}
                {...common}
                autosize
                minRows={2}
                value={value}
                onChange={(e) => set(e.currentTarget.value)}
              />
            );
          return (
            <TextInput
              key={variable.key}
              {...common}
              type={variable.type === 'phone' ? 'tel' : 'text'}
              value={value}
              onChange={(e) => set(e.currentTarget.value)}
            />
          );
        })}
        <FormError error={create.error} fields={fields} />
        <Group>
          <Button type="submit" loading={create.isPending}>
            Create agent
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function BlankAgentForm() {
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/agents', { body: { name } })),
    onSuccess: (agent) => navigate(`/agents/${agent.id}`),
  });
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate();
      }}
      aria-label="Create a blank agent"
    >
      <Stack gap="sm">
        <TextInput
          label="Name of the blank agent"
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(create.error, 'body/name')}
        />
        <FormError error={create.error} fields={['body/name']} />
        <Group>
          <Button type="submit" variant="default" loading={create.isPending}>
            Create blank agent
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function Component() {
  const templates = useQuery({
    queryKey: ['agent-templates'],
    queryFn: () => unwrap(api.GET('/v1/agent-templates')),
  });
  const [chosen, setChosen] = useState<string | null>(null);
  return (
    <>
      <PageHeader title="New agent" />
      <Stack gap="xl">
        <section aria-labelledby="with-wizard">
          <Title order={2} size="h3" id="with-wizard" mb="sm">
            With the wizard
          </Title>
          <Text c="dimmed" size="sm" mb="sm">
            Pick what the agent is for and answer a few questions about your business, one at a time.
          </Text>
          <Button component={Link} to="/agents/new/wizard">
            Start the wizard
          </Button>
        </section>
        <section aria-labelledby="from-template">
          <Title order={2} size="h3" id="from-template" mb="sm">
            From a template
          </Title>
          {templates.isPending ? (
            <Loading label="Loading templates" />
          ) : templates.error ? (
            <ErrorState error={templates.error} retry={() => templates.refetch()} />
          ) : (
            <Radio.Group value={chosen} onChange={setChosen} label="Template" description="What the agent is for">
              <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} mt="xs">
                {templates.data.templates.map((template) => (
                  <Card key={template.id} withBorder padding="sm">
                    <Radio
                      value={template.id}
                      label={template.name}
                      description={`${template.description} (${template.direction}, ${template.tone})`}
                    />
                  </Card>
                ))}
              </SimpleGrid>
            </Radio.Group>
          )}
          {chosen && (
            <Card withBorder mt="md">
              <TemplateForm key={chosen} templateId={chosen} />
            </Card>
          )}
        </section>
        <section aria-labelledby="blank">
          <Title order={2} size="h3" id="blank" mb="sm">
            Or start blank
          </Title>
          <Text c="dimmed" size="sm" mb="sm">
            Write every prompt part yourself.
          </Text>
          <BlankAgentForm />
        </section>
      </Stack>
    </>
  );
}
