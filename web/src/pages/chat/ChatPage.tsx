/**
 * Talk to an agent in text: the conversation goes through the LLM proxy (the agent's prompt, knowledge and model, as
 * on a call), its answer streamed as it is written, and under each answer the knowledge-base passages the model was
 * given for it. Beside it, the agent's assembled prompt, its knowledge index and the safety check's findings.
 */
import {
  Accordion,
  Alert,
  Badge,
  Button,
  Code,
  Grid,
  Group,
  List,
  NativeSelect,
  Paper,
  ScrollArea,
  Stack,
  Text,
  Textarea,
  Title,
} from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import type { components } from '../../api/schema.gen';
import { formatDateTime, humanize } from '../../ui/format';
import { EmptyState, ErrorState, Loading, PageHeader } from '../../ui/states';

interface Message {
  role: 'user' | 'assistant';
  content: string;
  /** Tokens the turn used, as the proxy reported them. */
  usage?: { prompt: number; completion: number };
  /** The knowledge-base passages retrieved for the turn, once the proxy has said (with the answer's last chunk). */
  knowledge?: KnowledgeChunk[];
}

type KnowledgeChunk = components['schemas']['RetrievedKnowledgeChunk'];

interface Chunk {
  choices?: Array<{ delta?: { content?: string | null } }>;
  usage?: { prompt_tokens: number; completion_tokens: number };
  parley_knowledge?: KnowledgeChunk[];
  error?: { message: string; code?: string };
}

/** Reads the proxy's server-sent events (chat.completion.chunk, then [DONE]), calling `onChunk` for each. */
async function readStream(body: ReadableStream<Uint8Array>, onChunk: (chunk: Chunk) => void) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      for (const line of event.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data === '[DONE]') return;
        onChunk(JSON.parse(data) as Chunk);
      }
    }
  }
}

/** The passages of the knowledge base one answer was given, best first; "none" says so. */
function KnowledgeUsed({ chunks }: { chunks: KnowledgeChunk[] }) {
  return (
    <Accordion variant="contained" radius="sm" mt={6} chevronPosition="left">
      <Accordion.Item value="knowledge" bg="white">
        <Accordion.Control py={4}>
          <Text size="xs" fw={600}>
            Knowledge used:{' '}
            {chunks.length === 0 ? 'none' : `${chunks.length} ${chunks.length === 1 ? 'passage' : 'passages'}`}
          </Text>
        </Accordion.Control>
        <Accordion.Panel>
          {chunks.length === 0 ? (
            <Text size="xs">
              No passage of the agent's knowledge base was put in the prompt for this answer: the agent has none, or
              nothing in it matched your message.
            </Text>
          ) : (
            <List type="ordered" size="xs" spacing={6} aria-label="Knowledge used for this answer">
              {chunks.map((chunk) => (
                <List.Item key={chunk.id}>
                  <Text span size="xs" fw={700}>
                    {chunk.source ?? 'Under no heading'}
                  </Text>{' '}
                  <Text span size="xs" c="dark.4">
                    (score {chunk.score})
                  </Text>
                  <Text size="xs" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
                    {chunk.excerpt}
                  </Text>
                </List.Item>
              ))}
            </List>
          )}
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  );
}

function Conversation({ agentId }: { agentId: string }) {
  const [messages, setMessages] = useState<Message[]>([]);
  const [draft, setDraft] = useState('');
  const abort = useRef<AbortController | null>(null);
  const bottom = useRef<HTMLDivElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: another agent starts a new conversation
  useEffect(() => {
    setMessages([]);
    return () => abort.current?.abort();
  }, [agentId]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: each new message scrolls the conversation
  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: 'nearest' });
  }, [messages]);

  const send = useMutation({
    mutationFn: async (history: Message[]) => {
      const controller = new AbortController();
      abort.current = controller;
      const body = await unwrap(
        api.POST('/v1/llm-proxy/{agentId}/chat/completions', {
          params: { path: { agentId } },
          body: {
            messages: history.map(({ role, content }) => ({ role, content })),
            stream: true,
            stream_options: { include_usage: true },
          },
          parseAs: 'stream',
          signal: controller.signal,
        }),
      );
      setMessages([...history, { role: 'assistant', content: '' }]);
      if (!body) return;
      await readStream(body, (chunk) => {
        if (chunk.error) throw new Error(chunk.error.message);
        const text = chunk.choices?.[0]?.delta?.content ?? '';
        const usage = chunk.usage;
        const knowledge = chunk.parley_knowledge;
        setMessages((previous) => {
          const last = previous[previous.length - 1];
          if (last?.role !== 'assistant') return previous;
          const next = { ...last, content: last.content + text };
          if (usage) next.usage = { prompt: usage.prompt_tokens, completion: usage.completion_tokens };
          if (knowledge) next.knowledge = knowledge;
          return [...previous.slice(0, -1), next];
        });
      });
    },
  });

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const text = draft.trim();
    if (!text || send.isPending) return;
    const history: Message[] = [...messages, { role: 'user', content: text }];
    setMessages(history);
    setDraft('');
    send.mutate(history);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey) submit(event);
  };
  const stopped = send.error instanceof DOMException && send.error.name === 'AbortError';
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h4" mb="xs">
        Conversation
      </Title>
      <ScrollArea.Autosize mah={480} type="auto">
        {messages.length === 0 ? (
          <EmptyState title="Say something to the agent">
            It answers as it would on a call, with its prompt, knowledge and model.
          </EmptyState>
        ) : (
          <Stack gap="sm" role="log" aria-label="Conversation" aria-live="polite">
            {messages.map((message, index) => (
              <Paper
                key={index}
                p="sm"
                bg={message.role === 'user' ? 'gray.1' : 'blue.0'}
                ml={message.role === 'user' ? 'xl' : 0}
                mr={message.role === 'user' ? 0 : 'xl'}
              >
                <Text size="xs" fw={700} c="dark.6">
                  {message.role === 'user' ? 'You' : 'Agent'}
                </Text>
                <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
                  {message.content || (send.isPending && index === messages.length - 1 ? '…' : '')}
                </Text>
                {message.usage && (
                  <Text size="xs" c="dark.4">
                    {message.usage.prompt} prompt tokens, {message.usage.completion} answer tokens
                  </Text>
                )}
                {message.knowledge && <KnowledgeUsed chunks={message.knowledge} />}
              </Paper>
            ))}
            <div ref={bottom} />
          </Stack>
        )}
      </ScrollArea.Autosize>
      {send.error && !stopped && <ErrorState error={send.error} title="The agent did not answer" />}
      <form onSubmit={submit}>
        <Textarea
          mt="sm"
          label="Your message"
          description="Enter sends; Shift+Enter starts a new line"
          value={draft}
          onChange={(e) => setDraft(e.currentTarget.value)}
          onKeyDown={onKeyDown}
          autosize
          minRows={2}
          maxRows={6}
        />
        <Group mt="sm" wrap="wrap">
          <Button type="submit" loading={send.isPending} disabled={!draft.trim()}>
            Send
          </Button>
          {send.isPending && (
            <Button variant="default" onClick={() => abort.current?.abort()}>
              Stop
            </Button>
          )}
          <Button
            variant="subtle"
            disabled={messages.length === 0 || send.isPending}
            onClick={() => {
              setMessages([]);
              send.reset();
            }}
          >
            Start over
          </Button>
        </Group>
      </form>
    </Paper>
  );
}

type KnowledgeIndexState = components['schemas']['AgentDetail']['knowledgeIndex'];

function KnowledgeIndex({ index }: { index: KnowledgeIndexState }) {
  const chunks = index?.chunks ?? 0;
  return (
    <Stack gap="xs">
      <Text size="sm">
        {chunks === 0
          ? index?.pending
            ? 'Nothing is indexed yet.'
            : 'The agent has no knowledge base.'
          : `${chunks} ${chunks === 1 ? 'passage' : 'passages'} indexed${index?.indexedAt ? ` ${formatDateTime(index.indexedAt)}` : ''}.`}
      </Text>
      {index?.pending && (
        <Text size="sm">
          A change of the knowledge base waits to be indexed; answers use the previous index meanwhile.
        </Text>
      )}
      <Text size="xs" c="dark.4">
        Each answer lists, under Knowledge used, the passages that best matched your message and were put in its prompt.
      </Text>
    </Stack>
  );
}

function AgentContext({ agentId }: { agentId: string }) {
  const agent = useQuery({
    queryKey: ['agent', agentId],
    queryFn: () => unwrap(api.GET('/v1/agents/{id}', { params: { path: { id: agentId } } })),
  });
  const safety = useQuery({
    queryKey: ['agent-safety', agentId],
    queryFn: () => unwrap(api.POST('/v1/agents/safety-check', { body: { agentId } })),
    staleTime: 60_000,
  });
  return (
    <Accordion multiple defaultValue={['safety']} variant="separated">
      <Accordion.Item value="prompt">
        <Accordion.Control>The assembled prompt</Accordion.Control>
        <Accordion.Panel>
          {agent.isPending ? (
            <Loading label="Loading the prompt" />
          ) : agent.error ? (
            <ErrorState error={agent.error} retry={() => agent.refetch()} />
          ) : (
            <Stack gap="xs">
              <Text size="xs" c="dark.4">
                Version {agent.data.version}. On each turn the knowledge base is replaced by its passages that best
                match the caller's last words.
              </Text>
              <ScrollArea.Autosize mah={360} type="auto">
                <Code block style={{ whiteSpace: 'pre-wrap' }} aria-label="Assembled prompt">
                  {agent.data.systemPrompt || '(empty)'}
                </Code>
              </ScrollArea.Autosize>
            </Stack>
          )}
        </Accordion.Panel>
      </Accordion.Item>
      <Accordion.Item value="safety">
        <Accordion.Control>
          Safety findings{' '}
          {safety.data && (
            <Badge ml="xs" color={safety.data.result === 'pass' ? 'teal.9' : 'red.9'}>
              {safety.data.result === 'pass' ? 'passed' : 'failed'}
            </Badge>
          )}
        </Accordion.Control>
        <Accordion.Panel>
          {safety.isPending ? (
            <Loading label="Checking the agent" />
          ) : safety.error ? (
            <ErrorState error={safety.error} retry={() => safety.refetch()} title="The safety check failed" />
          ) : safety.data.findings.length === 0 ? (
            <Text size="sm">No findings.</Text>
          ) : (
            <List spacing="xs" size="sm" aria-label="Safety findings">
              {safety.data.findings.map((finding, index) => (
                <List.Item key={index}>
                  <Badge size="xs" color={finding.severity === 'error' ? 'red.9' : 'orange.9'} mr={6}>
                    {finding.severity}
                  </Badge>
                  {finding.part ? `${humanize(finding.part)}${finding.line ? `, line ${finding.line}` : ''}: ` : ''}
                  {finding.message}{' '}
                  <Text span size="xs" c="dark.4">
                    {finding.suggestion}
                  </Text>
                </List.Item>
              ))}
            </List>
          )}
          <Button component={Link} to={`/agents/${agentId}`} variant="subtle" size="xs" mt="xs">
            Open the agent to fix them
          </Button>
        </Accordion.Panel>
      </Accordion.Item>
      <Accordion.Item value="knowledge">
        <Accordion.Control>Knowledge base</Accordion.Control>
        <Accordion.Panel>
          {agent.isPending ? (
            <Loading label="Loading the knowledge index" />
          ) : agent.error ? (
            <ErrorState error={agent.error} retry={() => agent.refetch()} />
          ) : (
            <KnowledgeIndex index={agent.data.knowledgeIndex} />
          )}
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  );
}

export function Component() {
  const [params, setParams] = useSearchParams();
  const agentId = params.get('agent') ?? '';
  const agents = useQuery({
    queryKey: ['agents', 'choices'],
    queryFn: () => unwrap(api.GET('/v1/agents', { params: { query: { limit: 500 } } })),
  });
  return (
    <>
      <PageHeader title="Talk to an agent" />
      {agents.isPending ? (
        <Loading label="Loading agents" />
      ) : agents.error ? (
        <ErrorState error={agents.error} retry={() => agents.refetch()} />
      ) : agents.data.agents.length === 0 ? (
        <EmptyState
          title="No agents yet"
          action={
            <Button component={Link} to="/agents/new">
              New agent
            </Button>
          }
        >
          Create an agent, then talk to it here.
        </EmptyState>
      ) : (
        <Stack>
          <NativeSelect
            label="Agent"
            maw={420}
            value={agentId}
            onChange={(e) => setParams(e.currentTarget.value ? { agent: e.currentTarget.value } : {})}
            data={[
              { value: '', label: 'Choose an agent' },
              ...agents.data.agents.map((agent) => ({ value: agent.id, label: `${agent.name} (${agent.status})` })),
            ]}
          />
          {agentId ? (
            <Grid>
              <Grid.Col span={{ base: 12, md: 7 }}>
                <Conversation agentId={agentId} />
              </Grid.Col>
              <Grid.Col span={{ base: 12, md: 5 }}>
                <AgentContext agentId={agentId} />
              </Grid.Col>
            </Grid>
          ) : (
            <Alert color="gray" title="Choose an agent to talk to">
              The conversation is not saved: leaving the page ends it.
            </Alert>
          )}
        </Stack>
      )}
    </>
  );
}
