/**
 * Calls engine: what running many calls at once costs this process.
 *
 *   npx tsx bench/calls-engine.ts
 *
 * 1. Engine. The real app and job workers (PGlite in memory, or DATABASE_URL) run CALLS calls on the simulated
 *    network with the built-in playbook engine, no speech synthesis (speech lasts its word count), on a clock
 *    SPEEDUP times faster than real time, so the engine, not simulated speech, sets the pace. The calls are placed
 *    all at once (concurrent requests), and the live ones (dialing, ringing, connected) are counted every 100 ms.
 *    Reported: the peak of live calls and how long it lasted; how long placing took; calls completed per wall minute;
 *    the engine's own turn latency (wall time from the end of one utterance to the start of the next one, i.e.
 *    writing the turn, the LLM turn, the far end's reply: everything but simulated speech and the fixed pause between
 *    turns), p50/p99; the LLM call alone per agent turn; the job fetches the calls.run workers made per call; peak
 *    RSS and process CPU (all threads) over the run; the load average before and after.
 * 2. LLM layer. A local OpenAI-compatible server (a child process, its own event loop) streams a short turn. In
 *    the same run, in interleaved blocks, the same turn is fetched through the LLM layer (createLlmClient with
 *    LLM_PROVIDER=openai, drained by collectChat) and directly (fetch, and undici.request, each reading the body to
 *    its end and parsing its data lines). Reported: p50/p99 of each and the layer's added time.
 * 3. TTS. TTS_CALLS calls run with espeak-ng; every synthesis is timed. Reported: synthesis wall time and process CPU
 *    per second of audio produced.
 *
 * Before the calls are placed, the process's CPU over IDLE_MS of idle is measured: the cost of the job workers'
 * polling alone (one loop per call slot).
 *
 * Env: CALLS (200), SPEEDUP (20), LLM_TURNS per method (2000; 0 skips part 2), TTS_CALLS (4; 0 skips part 3),
 * CALLS_PER_WORKER (default CALLS), IDLE_MS (5000).
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as wait } from 'node:timers/promises';
import { pino } from 'pino';
import { request } from 'undici';
import type { CompiledQuery } from 'kysely';

const CALLS = Number(process.env.CALLS ?? 200);
const SPEEDUP = Number(process.env.SPEEDUP ?? 20);
const LLM_TURNS = Number(process.env.LLM_TURNS ?? 2000);
const TTS_CALLS = Number(process.env.TTS_CALLS ?? 4);
const IDLE_MS = Number(process.env.IDLE_MS ?? 5000);
const BLOCK = 100;
const LIVE_SAMPLE_MS = 100;
const PAUSE_MS = 400; // the fixed pause before every utterance (calls.conversation.ts)

const FINAL = new Set(['completed', 'failed', 'busy', 'no_answer']);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const ms = (value: number) => `${value.toFixed(2)} ms`;
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' / ');

const AGENT = {
  name: 'Bench Betty',
  status: 'active',
  firstMessage: 'Hi, this is Betty from Acme. Do you have a minute?',
  playbook:
    '1. Say "We help teams book more demos with AI phone agents."\n2. Ask "Would you like a short demo next week?"',
  faq: 'How much does it cost? It starts at 49 dollars a month.',
  objections: 'too expensive -> "Most teams earn it back in the first month."',
  closers: '"Great, I will send you an invite."',
};

/** Every call is answered (last digit 0–4); personas vary with the second-to-last digit. */
const phoneOf = (i: number) => `+1415${String(5_000_000 + i * 10 + (i % 5)).padStart(7, '0')}`;

interface RunOptions {
  calls: number;
  tts: 'none' | 'espeak-ng';
}

async function runCalls(options: RunOptions) {
  const { loadConfig } = await import('../src/config.js');
  const { buildApp } = await import('../src/app.js');
  const { openInfrastructure } = await import('../src/runtime.js');
  const { startJobWorkers } = await import('../src/background.js');
  const { sql } = await import('kysely');

  const { createTestDatabase } = await import('../test/helpers.js');

  const storageDir = mkdtempSync(join(tmpdir(), 'parley-bench-objects-'));
  // On PostgreSQL, a database of its own (dropped at the end), so a run finds no earlier run's rows.
  const database = await createTestDatabase();
  const config = loadConfig({
    ...process.env,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    LOG_LEVEL: 'silent',
    DATA_DIR: ':memory:',
    STORAGE_DIR: storageDir,
    TTS_PROVIDER: options.tts,
    LLM_PROVIDER: 'parley-playbook',
    RATE_LIMIT_PER_MINUTE: '1000000',
    CALLS_MAX_CONCURRENT_PER_ACCOUNT: String(options.calls),
    CALLS_PER_WORKER: process.env.CALLS_PER_WORKER ?? String(options.calls),
  });
  const infra = await openInfrastructure(config, { redisKeyPrefix: `parley-bench-${process.pid}:` });

  // Engine time between utterances, per conversation (its sleeps share one abort signal).
  const lastSleep = new WeakMap<AbortSignal, { endedAt: number; ms: number }>();
  const turnGaps: number[] = [];
  // Real time scaled by SPEEDUP (the tests' virtual clock adds concurrent sleeps up; here they overlap, as in life).
  const origin = performance.now();
  const startMs = Date.now();
  const clock = {
    now: () => new Date(startMs + (performance.now() - origin) * SPEEDUP),
    async sleep(duration: number, signal?: AbortSignal) {
      const previous = signal ? lastSleep.get(signal) : undefined;
      if (previous && previous.ms !== PAUSE_MS && duration === PAUSE_MS)
        turnGaps.push(performance.now() - previous.endedAt);
      await wait(Math.max(0, duration) / SPEEDUP, undefined, signal ? { signal } : undefined);
      if (signal) lastSleep.set(signal, { endedAt: performance.now(), ms: duration });
    },
  };

  // The LLM call of each agent turn, and every synthesis, timed where the engine makes them.
  const llmTimes: number[] = [];
  const llm = infra.providers.llm;
  infra.providers.llm = {
    name: llm.name,
    chat(request) {
      const started = performance.now();
      const inner = llm.chat(request);
      return (async function* () {
        try {
          yield* inner;
        } finally {
          llmTimes.push(performance.now() - started);
        }
      })();
    },
  };
  const speech = { wallMs: 0, audioSeconds: 0, utterances: 0 };
  const tts = infra.providers.tts;
  infra.providers.tts = {
    name: tts.name,
    defaultVoice: tts.defaultVoice,
    voices: () => tts.voices(),
    close: () => tts.close(),
    async synthesize(text, voice, synthOptions) {
      const started = performance.now();
      const result = await tts.synthesize(text, voice, synthOptions);
      speech.wallMs += performance.now() - started;
      speech.audioSeconds += result.pcm.length / result.sampleRate;
      speech.utterances++;
      return result;
    },
  };

  const { app, services } = await buildApp({ config, ...infra, clock, logger: false });
  await app.ready();
  // The workers' database counts the fetches of calls.run (pg-boss's job-claiming statement).
  const fetches = { calls: 0 };
  const db = infra.database.db;
  const workersDb = new Proxy(db, {
    get(target, property) {
      if (property === 'executeQuery') {
        return (query: CompiledQuery) => {
          if (query.sql.includes('FOR UPDATE SKIP LOCKED') && query.parameters[0] === 'calls.run') fetches.calls++;
          return target.executeQuery(query);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const workers = await startJobWorkers({
    db: workersDb,
    services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });

  const send = async (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const response = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    if (response.statusCode !== 200) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json();
  };
  const registered = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'bench@example.com', password: 'correct horse battery' },
  });
  const cookie = `vsid=${registered.cookies.find((c) => c.name === 'vsid')!.value}`;
  const { key } = await send('POST', '/api-keys', { name: 'bench' }, { cookie });
  const auth = { authorization: `Bearer ${key}` };
  const agent = await send('POST', '/agents', AGENT, auth);
  await send('POST', '/phone-numbers', { number: '+14155559990' }, auth);
  const csv = ['First Name,Phone', ...Array.from({ length: options.calls }, (_, i) => `Person${i},${phoneOf(i)}`)].join(
    '\n',
  );
  const imported = await app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=Bench&defaultCountry=US',
    headers: { ...auth, 'content-type': 'text/csv' },
    payload: csv,
  });
  if (imported.statusCode !== 200) throw new Error(imported.body);
  const contacts = (await send('GET', `/contacts?listId=${imported.json().listId}&limit=500`, undefined, auth))
    .contacts as Array<{ id: string }>;

  // What the idle worker pool costs (one pg-boss polling loop per call slot), before any call.
  const idleBefore = process.cpuUsage();
  await wait(IDLE_MS);
  const idle = process.cpuUsage(idleBefore);
  const idleCpuShare = (idle.user + idle.system) / 1000 / IDLE_MS;

  // The run: every call placed at once (concurrent requests), until the last one ends.
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  // Live calls, counted from the trigger-kept call_counts (one account here), every LIVE_SAMPLE_MS.
  const live = { peak: 0, samples: [] as number[], counting: true };
  const countLive = (async () => {
    while (live.counting) {
      const row = await sql<{ live: string | number | null }>`
        SELECT sum(calls) AS live FROM call_counts WHERE status IN ('dialing', 'ringing', 'connected')`.execute(db);
      const now = Number(row.rows[0]?.live ?? 0);
      live.samples.push(now);
      live.peak = Math.max(live.peak, now);
      await wait(LIVE_SAMPLE_MS);
    }
  })();
  fetches.calls = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const callIds = await Promise.all(
    contacts.map(
      async (contact) =>
        (await send('POST', `/crm/contacts/${contact.id}/call`, { agentId: agent.id }, auth)).callId as string,
    ),
  );
  const placedMs = performance.now() - started;
  const outcomes = new Map<string, string>();
  while (outcomes.size < callIds.length) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const page = await send('GET', `/calls?limit=500`, undefined, auth);
    for (const call of page.calls as Array<{ id: string; status: string }>)
      if (FINAL.has(call.status)) outcomes.set(call.id, call.status);
  }
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const callsFetches = fetches.calls;
  clearInterval(sampler);
  live.counting = false;
  await countLive;
  const detail = await send('GET', `/calls/${callIds[0]}`, undefined, auth);
  const durations = (
    (await send('GET', '/calls?limit=500', undefined, auth)).calls as Array<{ durationSeconds: number | null }>
  ).map((c) => c.durationSeconds ?? 0);

  await workers.stop(10_000);
  await app.close();
  await infra.close();
  await database.drop();
  rmSync(storageDir, { recursive: true, force: true });
  return {
    wallMs,
    placedMs,
    livePeak: live.peak,
    /** How long the count of live calls stayed within 5% of its peak (samples × their interval). */
    atPeakMs: live.samples.filter((n) => n >= 0.95 * live.peak).length * LIVE_SAMPLE_MS,
    fetchesPerCall: callsFetches / callIds.length,
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRss,
    completed: [...outcomes.values()].filter((status) => status === 'completed').length,
    outcomes: [...outcomes.values()],
    turnGaps,
    llmTimes,
    speech,
    sampleTurns: detail.transcript.length as number,
    idleCpuShare,
    meanDurationSeconds: durations.reduce((sum, d) => sum + d, 0) / durations.length,
  };
}

/** The same streamed turn through the LLM layer and directly, in interleaved blocks. */
async function llmLayer() {
  const { createLlmClient, collectChat } = await import('../src/providers/llm/index.js');
  const server = fork(fileURLToPath(import.meta.url), ['--llm-server'], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => server.once('message', (message) => resolve(message as number)));
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  const messages = [
    { role: 'system' as const, content: 'You are Betty from Acme.' },
    { role: 'user' as const, content: 'What do you do?' },
  ];
  const layer = createLlmClient({ provider: 'openai', baseUrl, apiKey: 'sk-bench', model: 'bench', timeoutMs: 10_000 });
  const body = JSON.stringify({ model: 'bench', messages, stream: true, stream_options: { include_usage: true } });
  const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };
  /** The minimal client's parse: every data line is JSON; the turn is the concatenated content. */
  const contentOf = (text: string) => {
    let content = '';
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      content += JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '';
    }
    if (!content) throw new Error('empty turn');
  };
  const methods: Record<string, () => Promise<void>> = {
    layer: async () => {
      const turn = await collectChat(layer.chat({ messages }));
      if (!turn.message.content) throw new Error('empty turn');
    },
    fetch: async () => {
      const response = await fetch(`${baseUrl}/chat/completions`, { method: 'POST', headers, body });
      contentOf(await response.text());
    },
    undici: async () => {
      const response = await request(`${baseUrl}/chat/completions`, { method: 'POST', headers, body });
      contentOf(await response.body.text());
    },
  };
  const times: Record<string, number[]> = { layer: [], fetch: [], undici: [] };
  for (const run of Object.values(methods)) for (let i = 0; i < 50; i++) await run(); // warm-up
  for (let done = 0; done < LLM_TURNS; done += BLOCK) {
    for (const [name, run] of Object.entries(methods)) {
      for (let i = 0; i < BLOCK; i++) {
        const started = performance.now();
        await run();
        times[name]!.push(performance.now() - started);
      }
    }
  }
  server.kill();
  return times;
}

async function main() {
  if (process.argv.includes('--llm-server')) return llmServer();
  const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite (in memory)';
  console.log(`calls engine: ${CALLS} sim calls placed at once, ${database}, clock x${SPEEDUP}; load ${load()}`);

  const engine = await runCalls({ calls: CALLS, tts: 'none' });
  const minutes = engine.wallMs / 60_000;
  console.log(
    `  ${engine.outcomes.length} calls ended (${engine.completed} completed) in ${(engine.wallMs / 1000).toFixed(1)} s wall; placing them took ${(engine.placedMs / 1000).toFixed(1)} s (${((60_000 * CALLS) / engine.placedMs).toFixed(0)} placed per minute)`,
  );
  console.log(
    `  peak of live calls: ${engine.livePeak} of ${CALLS} (within 5% of it for ${(engine.atPeakMs / 1000).toFixed(1)} s); calls.run fetches per call: ${engine.fetchesPerCall.toFixed(1)}`,
  );
  console.log(
    `  calls completed per minute (wall, clock x${SPEEDUP}): ${(engine.completed / minutes).toFixed(0)}; mean call ${engine.meanDurationSeconds.toFixed(0)} s simulated, ${engine.sampleTurns} turns`,
  );
  console.log(
    `  engine turn latency (${engine.turnGaps.length} turns): p50 ${ms(percentile(engine.turnGaps, 50))}, p99 ${ms(percentile(engine.turnGaps, 99))}`,
  );
  console.log(
    `  LLM (playbook) per agent turn (${engine.llmTimes.length}): p50 ${ms(percentile(engine.llmTimes, 50))}, p99 ${ms(percentile(engine.llmTimes, 99))}`,
  );
  console.log(
    `  idle before the run (workers polling for ${process.env.CALLS_PER_WORKER ?? CALLS} call slots): ${(100 * engine.idleCpuShare).toFixed(0)}% of one core`,
  );
  console.log(
    `  peak RSS ${(engine.peakRss / 2 ** 20).toFixed(0)} MiB; CPU ${(engine.cpuMs / 1000).toFixed(1)} s over ${(engine.wallMs / 1000).toFixed(1)} s (${((100 * engine.cpuMs) / engine.wallMs).toFixed(0)}% of one core); load ${load()}`,
  );

  if (LLM_TURNS === 0) return;
  const llm = await llmLayer();
  console.log(`LLM layer, ${LLM_TURNS} turns each, interleaved; load ${load()}`);
  for (const [name, times] of Object.entries(llm))
    console.log(`  ${name.padEnd(6)} p50 ${ms(percentile(times, 50))}, p99 ${ms(percentile(times, 99))}`);
  const layerP50 = percentile(llm.layer!, 50);
  for (const direct of ['fetch', 'undici']) {
    const p50 = percentile(llm[direct]!, 50);
    console.log(
      `  added by the layer at p50 over ${direct}: ${ms(layerP50 - p50)} (goal < 5 ms); ratio ${(layerP50 / p50).toFixed(2)}`,
    );
  }

  if (TTS_CALLS === 0) return;
  const cpuBefore = process.cpuUsage();
  const spoken = await runCalls({ calls: TTS_CALLS, tts: 'espeak-ng' });
  const cpuUsed = process.cpuUsage(cpuBefore);
  const cpuMs = (cpuUsed.user + cpuUsed.system) / 1000;
  const { speech } = spoken;
  console.log(
    `TTS (espeak-ng), ${TTS_CALLS} calls: ${speech.utterances} utterances, ${speech.audioSeconds.toFixed(1)} s of audio; load ${load()}`,
  );
  console.log(`  synthesis wall time per second of audio: ${ms(speech.wallMs / speech.audioSeconds)}`);
  console.log(`  process CPU (whole run, all threads) per second of audio: ${ms(cpuMs / speech.audioSeconds)}`);
}

/** A local OpenAI-compatible /chat/completions: one short streamed turn, one SSE event per write. */
function llmServer() {
  const words = 'Sure, I can help with that. We help teams book more demos with AI phone agents.'.split(' ');
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const word of words) res.write(chunk({ content: `${word} ` }, null));
      res.write(chunk({}, 'stop'));
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-bench', choices: [], usage: { prompt_tokens: 120, completion_tokens: words.length } })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as AddressInfo).port));
}

await main();
if (!process.argv.includes('--llm-server')) process.exit(0);
