/**
 * Providers: what the OpenAI-compatible LLM adapter costs per streamed turn, and what offline speech costs.
 *
 *   npx tsx bench/providers.ts
 *
 * 1. LLM: a local node:http server (a child process, so it has its own event loop) streams a turn the
 *    way /chat/completions does: WORDS text chunks, one per write, then finish_reason, usage and [DONE].
 *    In the same run, in interleaved blocks, the same turn is fetched three ways over keep-alive:
 *      - adapter:      createOpenAiLlm(...).chat() drained by collectChat (SSE parse, JSON, tool assembly)
 *      - undici raw:   undici.request() and reading the body to its end (the floor for any client)
 *      - undici+parse: the same, then split into lines and JSON.parse each data line (a minimal client)
 *    Reported: p50/p99 per turn and the adapter's overhead over each baseline.
 * 2. TTS: espeak-ng (WASM, worker thread) on sentences of several lengths: process CPU time (all threads)
 *    per second of audio, wall time per second of audio, and the fixed cost per utterance from a
 *    least-squares fit cpu = fixed + perSecond x audio. The first (cold) utterance is reported apart.
 *    Then resampling to 8 kHz and WAV encoding, per second of audio.
 *
 * Env: TURNS per method (default 3000), WORDS per turn (default 60), TTS_ROUNDS (default 3).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const TURNS = Number(process.env.TURNS ?? 3000);
const WORDS = Number(process.env.WORDS ?? 60);
const TTS_ROUNDS = Number(process.env.TTS_ROUNDS ?? 3);
const BLOCK = 100;

/** The streamed turn, one SSE event per write, as a real server sends it. */
function turnEvents(): string[] {
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
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', choices: [], usage: { prompt_tokens: 120, completion_tokens: WORDS } })}\n\n`,
  );
  events.push('data: [DONE]\n\n');
  return events;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const fmt = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

async function main() {
  const { createOpenAiLlm, collectChat } = await import('../src/providers/llm/index.js');
  const { createEspeakTts } = await import('../src/providers/tts/index.js');
  const { encodeWav, resample } = await import('../src/lib/wav.js');

  const server = fork(fileURLToPath(import.meta.url), ['--server'], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => server.once('message', (message) => resolve(message as number)));
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  const payload = JSON.stringify({
    model: 'bench',
    messages: [
      { role: 'system', content: 'You are a bench.' },
      { role: 'user', content: 'Say sixty words.' },
    ],
    stream: true,
    stream_options: { include_usage: true },
  });

  const llm = createOpenAiLlm({ baseUrl, apiKey: 'sk-bench', model: 'bench', timeoutMs: 10_000 });
  const methods: Record<string, () => Promise<void>> = {
    adapter: async () => {
      const turn = await collectChat(
        llm.chat({
          messages: [
            { role: 'system', content: 'You are a bench.' },
            { role: 'user', content: 'Say sixty words.' },
          ],
        }),
      );
      if (turn.usage.outputTokens !== WORDS) throw new Error('unexpected turn');
    },
    'undici raw': async () => {
      const response = await request(`${baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        body: payload,
      });
      await response.body.text();
    },
    'undici+parse': async () => {
      const response = await request(`${baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        body: payload,
      });
      let text = '';
      for (const line of (await response.body.text()).split('\n')) {
        if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
        const chunk = JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] };
        text += chunk.choices[0]?.delta.content ?? '';
      }
      if (!text) throw new Error('unexpected turn');
    },
  };

  console.log(`LLM: ${TURNS} turns per method, ${WORDS} text chunks per turn, interleaved blocks of ${BLOCK}`);
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(methods).map((name) => [name, []]));
  for (const run of Object.values(methods)) for (let i = 0; i < 200; i++) await run(); // warm-up
  for (let done = 0; done < TURNS; done += BLOCK) {
    for (const [name, run] of Object.entries(methods)) {
      for (let i = 0; i < BLOCK; i++) {
        const started = performance.now();
        await run();
        samples[name]!.push(performance.now() - started);
      }
    }
  }
  const stats = Object.fromEntries(
    Object.entries(samples).map(([name, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return [name, { p50: percentile(sorted, 50), p99: percentile(sorted, 99) }];
    }),
  );
  console.log('| method | p50 | p99 | adapter p50 − this p50 | adapter p50 / this p50 |');
  console.log('|---|---|---|---|---|');
  for (const [name, { p50, p99 }] of Object.entries(stats)) {
    const adapter = stats.adapter!.p50;
    console.log(
      `| ${name} | ${fmt(p50)} | ${fmt(p99)} | ${name === 'adapter' ? '' : fmt(adapter - p50)} | ${name === 'adapter' ? '' : (adapter / p50).toFixed(2)} |`,
    );
  }
  server.disconnect();

  // TTS
  const tts = createEspeakTts();
  const sentences = [
    'Hello.',
    'Hi, this is Sam from Acme Dental.',
    'We have openings next week for a cleaning, and your first visit is usually covered by insurance.',
    'Perfect, I have you down for Tuesday at ten in the morning. You will get a text message with the details, and if anything changes you can reply to it or call us back at this number.',
  ];
  const cpuMs = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  };
  let cpu = cpuMs();
  let wall = performance.now();
  const cold = await tts.synthesize(sentences[1]!, 'en-us');
  console.log(
    `\nTTS espeak-ng, cold first utterance (worker start, WASM compile): ${(cpuMs() - cpu).toFixed(0)} ms CPU, ${(performance.now() - wall).toFixed(0)} ms wall for ${(cold.pcm.length / cold.sampleRate).toFixed(2)} s of audio`,
  );
  const points: { audio: number; cpu: number; wall: number }[] = [];
  for (let round = 0; round < TTS_ROUNDS; round++) {
    for (const sentence of sentences) {
      cpu = cpuMs();
      wall = performance.now();
      const speech = await tts.synthesize(sentence, 'en-us');
      points.push({ audio: speech.pcm.length / speech.sampleRate, cpu: cpuMs() - cpu, wall: performance.now() - wall });
    }
  }
  const total = points.reduce(
    (sum, point) => ({ audio: sum.audio + point.audio, cpu: sum.cpu + point.cpu, wall: sum.wall + point.wall }),
    { audio: 0, cpu: 0, wall: 0 },
  );
  const meanAudio = total.audio / points.length;
  const meanCpu = total.cpu / points.length;
  const slope =
    points.reduce((sum, point) => sum + (point.audio - meanAudio) * (point.cpu - meanCpu), 0) /
    points.reduce((sum, point) => sum + (point.audio - meanAudio) ** 2, 0);
  console.log('| sentence | audio | CPU (median of rounds) | wall (median) |');
  console.log('|---|---|---|---|');
  sentences.forEach((sentence, index) => {
    const mine = points.filter((_, i) => i % sentences.length === index);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(
      `| ${sentence.length} chars | ${mine[0]!.audio.toFixed(2)} s | ${median(mine.map((p) => p.cpu)).toFixed(0)} ms | ${median(mine.map((p) => p.wall)).toFixed(0)} ms |`,
    );
  });
  console.log(
    `warm: ${(total.cpu / total.audio).toFixed(0)} ms CPU and ${(total.wall / total.audio).toFixed(0)} ms wall per second of audio over ${total.audio.toFixed(1)} s; ` +
      `fit: ${(meanCpu - slope * meanAudio).toFixed(0)} ms fixed per utterance + ${slope.toFixed(0)} ms per second of audio`,
  );
  await tts.close();

  const speech = await (async () => {
    const again = createEspeakTts();
    try {
      return await again.synthesize(sentences[3]!, 'en-us');
    } finally {
      await again.close();
    }
  })();
  const seconds = speech.pcm.length / speech.sampleRate;
  const repeats = 20;
  cpu = cpuMs();
  for (let i = 0; i < repeats; i++)
    encodeWav({ samples: resample(speech.pcm, speech.sampleRate, 8000), sampleRate: 8000, channels: 1 });
  console.log(
    `resample 22,050 -> 8,000 Hz + WAV encode: ${((cpuMs() - cpu) / (repeats * seconds)).toFixed(2)} ms CPU per second of audio`,
  );
}

if (process.argv.includes('--server')) {
  // The server side, in a process of its own.
  const events = turnEvents();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const event of events) res.write(event);
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as AddressInfo).port));
  process.on('disconnect', () => process.exit(0));
} else {
  await main();
}
