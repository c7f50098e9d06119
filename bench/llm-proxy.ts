/**
 * The LLM proxy's added latency: the same streamed turn from a local OpenAI-compatible upstream, fetched directly and
 * through POST /api/v1/llm-proxy/{agentId}/chat/completions, in the same run, in interleaved blocks.
 *
 *   npx tsx bench/llm-proxy.ts                  # PGlite
 *   DATABASE_URL=postgres://... npx tsx bench/llm-proxy.ts
 *
 * The upstream is a node:http server in a child process (its own event loop) that streams WORDS text chunks, one
 * write each, then finish_reason, usage and [DONE]. Parley runs in this process, listening on 127.0.0.1, with an agent
 * whose liveLlmId names the upstream in the model catalog and whose knowledge base is the 14-section fixture handbook
 * (so every proxied turn also retrieves knowledge: a full-text query). The client is undici over keep-alive:
 *   - direct:       the upstream itself (what any client pays)
 *   - proxy stream: stream: true through the proxy (API key auth, agent lookup, retrieval, catalog, upstream, SSE out)
 *   - proxy whole:  the same turn answered as one chat.completion
 * Reported: p50/p99 of the whole turn and of the first token (the first event carrying text), and the proxy's added
 * time (proxy p50 - direct p50). Client and proxy share this process's event loop, so the added time includes the
 * proxy's share of it; the upstream does not.
 *
 * Env: TURNS per method (default 2000), WORDS per turn (default 40), NO_KNOWLEDGE=1 for an agent without a knowledge base.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const TURNS = Number(process.env.TURNS ?? 2000);
const WORDS = Number(process.env.WORDS ?? 40);
const BLOCK = 100;

function serveUpstream() {
  const events: string[] = [];
  for (let i = 0; i < WORDS; i++) {
    events.push(
      `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] })}\n\n`,
    );
  }
  events.push(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
  );
  events.push(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', choices: [], usage: { prompt_tokens: 300, completion_tokens: WORDS } })}\n\n`,
  );
  events.push('data: [DONE]\n\n');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of events) res.write(event);
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as AddressInfo).port));
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

async function main() {
  const { buildTestApp, signUp, call, asKey } = await import('../test/helpers.js');
  const upstreamProcess = fork(fileURLToPath(import.meta.url), ['--upstream'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, WORDS: String(WORDS) },
  });
  const upstreamPort = await new Promise<number>((resolve) =>
    upstreamProcess.once('message', (message) => resolve(message as number)),
  );
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;

  const t = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'silent' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const proxyPort = (t.app.server.address() as AddressInfo).port;
  const operator = await signUp(t.app);
  await t.infra.database.db
    .updateTable('users')
    .set({ is_platform_admin: true })
    .where('id', '=', operator.userId)
    .execute();
  const model = await call({ app: t.app, headers: { cookie: operator.cookie } }, 'POST', '/admin/models/llm', {
    slug: 'bench-upstream',
    name: 'Bench upstream',
    provider: 'openai-compatible',
    baseUrl: upstreamUrl,
    model: 'bench',
    apiKey: 'sk-bench',
    inputPer1kTokensUsd: '0.1',
    outputPer1kTokensUsd: '0.2',
  });
  if (model.statusCode !== 200) throw new Error(model.body);
  const owner = await signUp(t.app);
  const handbook = readFileSync(new URL('../test/fixtures/knowledge/acme-handbook.md', import.meta.url), 'utf8');
  const agent = (
    await call(asKey(owner), 'POST', '/agents', {
      name: 'Bench',
      mission: 'Answer.',
      voice: 'en-us',
      knowledgeBase: process.env.NO_KNOWLEDGE ? '' : handbook,
      liveLlmId: 'bench-upstream',
    })
  ).json();
  await t.services.knowledge.reindex(owner.accountId, agent.id);

  const dispatcher = new Agent({ keepAliveTimeout: 60_000, connections: 4 });
  const messages = [{ role: 'user', content: 'How long is the warranty on the panels?' }];
  const direct = {
    url: `${upstreamUrl}/chat/completions`,
    headers: { authorization: 'Bearer sk-bench' },
    body: { model: 'bench', messages, stream: true, stream_options: { include_usage: true } },
  };
  const proxyUrl = `http://127.0.0.1:${proxyPort}/api/v1/llm-proxy/${agent.id}/chat/completions`;
  const proxied = {
    url: proxyUrl,
    headers: { authorization: `Bearer ${owner.apiKey}` },
    body: { messages, stream: true },
  };
  const whole = { url: proxyUrl, headers: { authorization: `Bearer ${owner.apiKey}` }, body: { messages } };

  async function fetchTurn(
    target: typeof direct | typeof proxied | typeof whole,
  ): Promise<{ total: number; first: number }> {
    const started = performance.now();
    const response = await request(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: JSON.stringify(target.body),
      dispatcher,
    });
    let first = -1;
    let bytes = '';
    for await (const chunk of response.body) {
      if (first < 0) {
        bytes += chunk.toString();
        if (bytes.includes('"content"')) first = performance.now() - started;
      }
    }
    if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
    const total = performance.now() - started;
    return { total, first: first < 0 ? total : first };
  }

  // The floor of any authenticated request to Parley (API key check, rate limit, one agent read): what the proxy
  // pays before it does anything of its own.
  async function readAgent(): Promise<{ total: number; first: number }> {
    const started = performance.now();
    const response = await request(`http://127.0.0.1:${proxyPort}/api/v1/agents/${agent.id}`, {
      headers: { authorization: `Bearer ${owner.apiKey}` },
      dispatcher,
    });
    await response.body.text();
    const total = performance.now() - started;
    return { total, first: total };
  }
  const methods = {
    direct: () => fetchTurn(direct),
    'GET agent (floor)': readAgent,
    'proxy stream': () => fetchTurn(proxied),
    'proxy whole': () => fetchTurn(whole),
  };
  for (const run of Object.values(methods)) for (let i = 0; i < 200; i++) await run();
  const samples: Record<string, { total: number[]; first: number[] }> = Object.fromEntries(
    Object.keys(methods).map((name) => [name, { total: [], first: [] }]),
  );
  for (let done = 0; done < TURNS; done += BLOCK) {
    for (const [name, run] of Object.entries(methods)) {
      for (let i = 0; i < BLOCK; i++) {
        const { total, first } = await run();
        samples[name]!.total.push(total);
        samples[name]!.first.push(first);
      }
    }
  }
  const stat = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  };
  console.log(
    `${TURNS} turns per method, ${WORDS} text chunks per turn, ${t.infra.database.kind}; load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    '| method | turn p50 | turn p99 | first token p50 | first token p99 | added p50 (turn) | added p50 (first token) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  const base = { total: stat(samples.direct!.total), first: stat(samples.direct!.first) };
  for (const [name, values] of Object.entries(samples)) {
    const total = stat(values.total);
    const first = stat(values.first);
    const added =
      name === 'direct' || name.startsWith('GET')
        ? ['', '']
        : [fmt(total.p50 - base.total.p50), name === 'proxy whole' ? '' : fmt(first.p50 - base.first.p50)];
    const noFirst = name === 'proxy whole' || name.startsWith('GET');
    console.log(
      `| ${name} | ${fmt(total.p50)} | ${fmt(total.p99)} | ${noFirst ? '' : fmt(first.p50)} | ${noFirst ? '' : fmt(first.p99)} | ${added[0]} | ${added[1]} |`,
    );
  }
  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  await dispatcher.close();
  upstreamProcess.kill();
  await t.close();
}

if (process.argv.includes('--upstream')) serveUpstream();
else await main();
