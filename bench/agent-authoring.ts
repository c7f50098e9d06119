/**
 * Agent authoring: what the safety rules, the offline generator and voice samples cost.
 *
 *   npx tsx bench/agent-authoring.ts
 *
 * 1. Safety rules on each of the eight rendered templates (~3,600 characters of prompt each), ROUNDS x 8 checks, against a
 *    baseline in the same process on the same texts: assembling the system prompt and testing one regular
 *    expression on every line (the floor of any line-by-line check). Reported: µs per check and the ratio.
 * 2. The offline generator (closest template + rendering + the rules on the draft), µs per draft.
 * 3. A voice sample through the voices service (espeak-ng in its worker, local object storage in a temp dir):
 *    the first request renders and stores it, later ones read it back. Baseline: fs.readFile of the stored file.
 *
 * Env: ROUNDS (default 500), SAMPLES (cached reads, default 50).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const ROUNDS = Number(process.env.ROUNDS ?? 500);
const SAMPLES = Number(process.env.SAMPLES ?? 50);

function time(runs: number, run: () => void): number {
  const start = performance.now();
  for (let i = 0; i < runs; i++) run();
  return (performance.now() - start) / runs;
}
async function timeAsync(runs: number, run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < runs; i++) await run();
  return (performance.now() - start) / runs;
}
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

async function main() {
  const { AGENT_TEMPLATES, renderTemplate } = await import('../src/modules/agent-templates/agent-templates.catalog.js');
  const { generateOffline } = await import('../src/modules/agent-templates/agent-templates.generate.js');
  const { runSafetyRules } = await import('../src/modules/safety/safety.rules.js');
  const { assembleSystemPrompt } = await import('../src/modules/agents/agents.prompt.js');
  const { createEspeakTts } = await import('../src/providers/tts/index.js');
  const { createLocalStorage } = await import('../src/providers/storage/index.js');
  const { createVoicesService } = await import('../src/modules/voices/voices.service.js');

  console.log(
    `load average before: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  const definitions = AGENT_TEMPLATES.map((template) => renderTemplate(template, {}));
  const size = definitions.reduce((sum, d) => sum + assembleSystemPrompt(d).length, 0) / definitions.length;
  console.log(`templates: ${definitions.length}, mean system prompt ${size.toFixed(0)} characters`);

  const FLOOR = /\b(password|card number|guarantee)\b/i;
  let sink = 0;
  for (let warm = 0; warm < 50; warm++) for (const d of definitions) sink += runSafetyRules(d).length;
  const baseline =
    time(ROUNDS, () => {
      for (const d of definitions) for (const line of assembleSystemPrompt(d).split('\n')) if (FLOOR.test(line)) sink++;
    }) / definitions.length;
  const rules =
    time(ROUNDS, () => {
      for (const d of definitions) sink += runSafetyRules(d).length;
    }) / definitions.length;
  console.log(
    `safety rules: ${us(rules)} per check; baseline (assemble + one regex per line) ${us(baseline)}; ratio ${(rules / baseline).toFixed(1)}x`,
  );

  const input = {
    businessDescription: 'Harbor Family Dentistry is a dental practice in Portland.',
    goal: 'Book cleanings and check-ups.',
  };
  const draft = time(ROUNDS, () => {
    const { definition } = generateOffline(input);
    sink += runSafetyRules(definition).length;
  });
  console.log(`offline generator + rules: ${us(draft)} per draft`);

  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-voices-'));
  const tts = createEspeakTts();
  try {
    const objects = createLocalStorage({ dir });
    const voices = createVoicesService({ tts, objects, catalog: { liveModels: async () => [] } });
    const list = await voices.listVoices({ limit: 500, offset: 0 });
    if (!list.engine.available) {
      console.log(`voice samples: skipped (${list.engine.message})`);
      return;
    }
    await tts.synthesize('Warm up.', 'en-us'); // the worker and its WebAssembly start outside the timings
    const ids = ['en-us', 'en-gb', 'fr-fr'].filter((id) => list.voices.some((v) => v.id === id));
    const renders: number[] = [];
    for (const id of ids) {
      const start = performance.now();
      await voices.sample(id);
      renders.push(performance.now() - start);
    }
    const render = renders.reduce((a, b) => a + b, 0) / renders.length;
    const cached = await timeAsync(SAMPLES, () => voices.sample('en-us'));
    const file = join(dir, 'voice-samples', 'espeak-ng', 'en-us.wav');
    const raw = await timeAsync(SAMPLES, async () => readFileSync(file));
    const bytes = readFileSync(file).length;
    console.log(
      `voice sample (${(bytes / 1024).toFixed(0)} KiB WAV): first request ${render.toFixed(1)} ms (renders + stores), cached ${cached.toFixed(2)} ms, fs.readFile ${raw.toFixed(2)} ms`,
    );
    console.log(
      `  render / cached ${(render / cached).toFixed(0)}x; cached / readFile ${(cached / raw).toFixed(1)}x (the cached path also lists the voices)`,
    );
  } finally {
    await tts.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `load average after: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}  (sink ${sink > 0 ? 'ok' : '0'})`,
  );
}

await main();
