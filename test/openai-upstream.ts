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
export const replyWith = (pieces: string[], usage: [number, number] = [100, 10]): UpstreamHandler => (_req, res) =>
  sendEvents(res, [...pieces.map((piece, i) => textChunk(piece, i === pieces.length - 1 ? 'stop' : null)), usageChunk(...usage)]);

export async function startUpstream() {
  const requests: { path: string; headers: IncomingMessage['headers']; body: any }[] = [];
  let handler: UpstreamHandler = replyWith(['Hello!']);
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
    await handler(req, res, body);
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
    last: () => requests.at(-1)!,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type Upstream = Awaited<ReturnType<typeof startUpstream>>;
