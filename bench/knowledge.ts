/**
 * Knowledge retrieval per turn on a 5 MB knowledge base, against the 14-section fixture handbook as the baseline, in
 * the same run; and how long indexing the 5 MB takes.
 *
 *   npx tsx bench/knowledge.ts                  # PGlite
 *   DATABASE_URL=postgres://... npx tsx bench/knowledge.ts
 *
 * The 5 MB base is generated (fixed seed): markdown sections of sentences drawn from a 6,000-word vocabulary, so
 * words are spread like a real handbook's (a few common, most rare). It is written to the agent's row directly (the
 * API caps a knowledge base at 200,000 characters) and indexed by the knowledge service, as the re-index job does.
 * Questions are 8-word turns drawn from the same vocabulary. Reported: index time, chunks, and retrieval p50/p99 per
 * turn (the whole retrieve(): index lookup, full-text query with ts_rank_cd, budget filling).
 *
 * Env: KB_MB (default 5), QUESTIONS (default 400).
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';

const KB_MB = Number(process.env.KB_MB ?? 5);
const QUESTIONS = Number(process.env.QUESTIONS ?? 400);

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(0x6b6e6f77);
const syllables = [
  'ka',
  'lo',
  'mi',
  'ra',
  'ten',
  'sol',
  'vi',
  'der',
  'an',
  'po',
  'lu',
  'ge',
  'ro',
  'nis',
  'ta',
  'fe',
  'bri',
  'mon',
];
const vocabulary = Array.from({ length: 6000 }, (_, i) => {
  let word = '';
  for (let n = i + 7; n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length];
  return word;
});
/** Zipf-like: a few words very common, most rare. */
const word = () => vocabulary[Math.floor(vocabulary.length * rand() ** 2.5)]!;
const sentence = (words: number) => Array.from({ length: words }, word).join(' ') + '.';

function generate(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let section = 0; size < bytes; section++) {
    const text =
      `## ${word()} ${word()} ${section}\n\n` +
      Array.from({ length: 3 }, () => Array.from({ length: 6 }, () => sentence(12)).join(' ')).join('\n\n') +
      '\n\n';
    parts.push(text);
    size += text.length;
  }
  return parts.join('');
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

async function main() {
  const { buildTestApp, signUp, call, asKey } = await import('../test/helpers.js');
  const t = await buildTestApp({ env: { LOG_LEVEL: 'silent' } });
  const owner = await signUp(t.app);
  const handbook = readFileSync(new URL('../test/fixtures/knowledge/acme-handbook.md', import.meta.url), 'utf8');
  const small = (
    await call(asKey(owner), 'POST', '/agents', { name: 'Small', voice: 'en-us', knowledgeBase: handbook })
  ).json();
  const large = (await call(asKey(owner), 'POST', '/agents', { name: 'Large', voice: 'en-us' })).json();
  const text = generate(KB_MB * 1024 * 1024);
  await t.infra.database.db.updateTable('agents').set({ knowledge: text }).where('id', '=', large.id).execute();

  await t.services.knowledge.reindex(owner.accountId, small.id);
  const indexStarted = performance.now();
  const { chunks } = await t.services.knowledge.reindex(owner.accountId, large.id);
  const indexMs = performance.now() - indexStarted;

  const questions = Array.from({ length: QUESTIONS }, () => sentence(8));
  const handbookQuestions = [
    'How long is the warranty?',
    'Can I pay in instalments?',
    'Do you install on flat roofs?',
    'When is support open?',
  ];
  const measure = async (agentId: string, asked: string[]) => {
    for (const q of asked.slice(0, 50)) await t.services.knowledge.retrieve(owner.accountId, agentId, q);
    const times: number[] = [];
    let found = 0;
    for (let i = 0; i < QUESTIONS; i++) {
      const started = performance.now();
      const result = await t.services.knowledge.retrieve(owner.accountId, agentId, asked[i % asked.length]!);
      times.push(performance.now() - started);
      found += result.length;
    }
    const sorted = times.sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), chunksPerTurn: found / QUESTIONS };
  };
  const baseline = await measure(small.id, handbookQuestions);
  const big = await measure(large.id, questions);

  console.log(
    `${t.infra.database.kind}; load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `indexed ${(text.length / 1024 / 1024).toFixed(1)} MB into ${chunks} chunks in ${(indexMs / 1000).toFixed(1)} s`,
  );
  console.log('| knowledge base | retrieval p50 | retrieval p99 | chunks per turn | p50 / baseline p50 |');
  console.log('|---|---|---|---|---|');
  console.log(
    `| fixture handbook (14 sections, baseline) | ${fmt(baseline.p50)} | ${fmt(baseline.p99)} | ${baseline.chunksPerTurn.toFixed(1)} | 1.00 |`,
  );
  console.log(
    `| generated ${KB_MB} MB | ${fmt(big.p50)} | ${fmt(big.p99)} | ${big.chunksPerTurn.toFixed(1)} | ${(big.p50 / baseline.p50).toFixed(2)} |`,
  );
  await t.close();
}

await main();
