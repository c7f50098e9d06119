/**
 * A local server speaking OpenAI's /chat/completions (streamed, as the LLM layer asks for it) and /embeddings, for the
 * proxy, knowledge and benchmark runs. Each test sets what the next request gets; every request is kept.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, body: any) => void | Promise<void>;

export const textChunk = (content: string, finish: string | null = null) => ({
  id: 'chatcmpl-up',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
});

export const usageChunk = (prompt: number, completion: number) => ({
  id: 'chatcmpl-up',
  object: 'chat.completion.chunk',
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
});

/** Writes the events as server-sent events, then [DONE]. */
export function sendEvents(res: ServerResponse, events: unknown[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
  res.end('data: [DONE]\n\n');
}

/** A reply of text in pieces, with usage. */
export const replyWith =
  (pieces: string[], usage: [number, number] = [100, 10]): UpstreamHandler =>
  (_req, res) =>
    sendEvents(res, [
      ...pieces.map((piece, i) => textChunk(piece, i === pieces.length - 1 ? 'stop' : null)),
      usageChunk(...usage),
    ]);

const EMBEDDING_DIMENSIONS = 256;
const STOP_WORDS = new Set([
  'a',
  'an',
  'the',
  'i',
  'am',
  'is',
  'are',
  'do',
  'does',
  'how',
  'what',
  'of',
  'to',
  'in',
  'and',
  'or',
  'for',
  'my',
  'me',
  'if',
  'it',
]);

/**
 * A stand-in embedding model: hashed bag of words, with `synonyms` mapped onto one word first, so texts that share
 * no word can still be close (what a real model does for "covered" and "warranty").
 */
export function bagOfWordsEmbedding(text: string, synonyms: Record<string, string> = {}): number[] {
  const vector = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    if (STOP_WORDS.has(raw)) continue;
    const word = synonyms[raw] ?? raw;
    let hash = 0;
    for (const char of word) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    vector[hash % EMBEDDING_DIMENSIONS]! += 1;
  }
  return vector;
}

/** Answers POST /embeddings with bagOfWordsEmbedding of each input. */
export const embeddingsWith =
  (synonyms: Record<string, string> = {}): UpstreamHandler =>
  (_req, res, body) => {
    const inputs: string[] = Array.isArray(body?.input) ? body.input : [String(body?.input ?? '')];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        data: inputs.map((input, index) => ({
          object: 'embedding',
          index,
          embedding: bagOfWordsEmbedding(input, synonyms),
        })),
        model: body?.model,
      }),
    );
  };

export async function startUpstream() {
  const requests: { path: string; headers: IncomingMessage['headers']; body: any }[] = [];
  let handler: UpstreamHandler = replyWith(['Hello!']);
  let embeddings: UpstreamHandler = embeddingsWith();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: any = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
    } catch {
      body = null;
    }
    requests.push({ path: req.url!, headers: req.headers, body });
    await (req.url?.endsWith('/embeddings') ? embeddings : handler)(req, res, body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    baseUrl,
    requests,
    set handler(next: UpstreamHandler) {
      handler = next;
    },
    set embeddings(next: UpstreamHandler) {
      embeddings = next;
    },
    last: () => requests.at(-1)!,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type Upstream = Awaited<ReturnType<typeof startUpstream>>;
