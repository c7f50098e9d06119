/**
 * What the README (and bench/README.md) say about the code, held to the code: the background jobs, the test runner's
 * limits, the figures quoted twice, the successes that are not 200, the per-call token, the API-key cache, the tour's
 * recording step and the size of the API document. Each of these once said something the code did not do.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { eventRoutes, jobRegistry, workerLoops } from '../src/background.js';
import { buildCall } from './factories/index.js';
import { buildTestApp, signUp, type TestApp } from './helpers.js';
import { ROOT } from './process-kit.js';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const readme = read('README.md');
const bench = read('bench/README.md');

/** The README from `heading` to the next heading of the same level. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`${heading}\n`);
  assert.ok(start >= 0, `no "${heading}"`);
  const level = heading.split(' ')[0]!;
  const end = text.indexOf(`\n${level} `, start + heading.length);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The bullet of a list that starts with `start`, up to the next bullet of the same depth. */
function bullet(text: string, start: string): string {
  const from = text.indexOf(`- ${start}`);
  assert.ok(from >= 0, `no bullet "${start}"`);
  const indent = text.slice(text.lastIndexOf('\n', from) + 1, from);
  const next = text.slice(from + 2).search(new RegExp(`\\n${indent}- |\\n\\n|\\n#`));
  return text.slice(from, next < 0 ? undefined : from + 2 + next);
}

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

test('the Jobs paragraph names every job, subscription and loop of src/background.ts, and nothing else', () => {
  const jobs = bullet(readme, '**Jobs**');
  const declared = new Set([
    ...Object.keys(jobRegistry),
    ...eventRoutes.map((r) => r.queue),
    ...Object.keys(workerLoops),
  ]);
  const named = new Set([...jobs.matchAll(/`([a-z-]+\.[a-z-]+)`/g)].map((m) => m[1]!));
  assert.deepEqual([...named].sort(), [...declared].sort());
});

test("the runner's per-file limits are the ones the README gives", () => {
  const runner = read('scripts/run-tests.mjs');
  const limit = Number(/const FILE_TIMEOUT_MS = ([\d_]+);/.exec(runner)![1]!.replaceAll('_', ''));
  const overrides = [...runner.matchAll(/^\s+'([^']+\.test\.ts)': ([\d_]+),$/gm)].map(
    (m) => [m[1]!, Number(m[2]!.replaceAll('_', ''))] as const,
  );
  assert.ok(overrides.length > 0);
  const words = { 300000: 'five minutes', 600000: 'ten minutes' } as Record<number, string>;
  const running = bullet(readme, '**Running tests**');
  assert.match(running, new RegExp(`still running after ${words[limit]} is stopped and fails`));
  for (const [file, ms] of overrides) {
    assert.ok(words[ms], `${file}: ${ms} ms`);
    const said = running.slice(running.indexOf(words[ms]!));
    assert.ok(said.includes(`\`${file}\``), `the README names ${file} with ${words[ms]}`);
  }
});

test('a figure the README gives twice is the same figure, and the one bench/README.md measured', () => {
  // count(*) over a million calls, beside the counts table.
  const ranges = [...readme.matchAll(/(\d+)–(\d+) ms\s+(?:of\s+)?`count\(\*\)`/g)].map((m) => [
    Number(m[1]),
    Number(m[2]),
  ]);
  assert.equal(ranges.length, 2, 'the Calls section and Performance');
  assert.deepEqual(ranges[0], ranges[1]);
  const [low, high] = ranges[0]!;
  const figures = section(bench, '## Current figures');
  const [, from, to] = /`count\(\*\)` of the same rows: (\d+)–(\d+) ms/.exec(figures)!;
  for (const ms of [Number(from), Number(to)]) assert.ok(low! <= ms && ms <= high!, `${ms} ms within ${low}–${high}`);

  // espeak-ng's CPU per utterance.
  const espeak = [...readme.matchAll(/~(\d+) ms of CPU per\s+utterance/g)].map((m) => m[1]);
  assert.equal(espeak.length, 2, 'Providers and Performance');
  assert.deepEqual(new Set(espeak), new Set([/espeak-ng, CPU per utterance[^\n]*\*\*~(\d+) ms\*\*/.exec(bench)![1]]));

  // The campaign figures: the dialer as it runs (the do-not-call list read per batch), from the latest run.
  const campaigns = bullet(section(readme, '## Performance'), 'Campaigns');
  assert.doesNotMatch(campaigns, /per contact/);
  const row = /\| campaign gate, contacts decided per second, PostgreSQL[^\n]*/.exec(bench)![0];
  const gate = Number(/\| ([\d,]+)\/s: \*\*/.exec(row)![1]!.replace(',', ''));
  const said = Number(/~([\d,]+) contacts a second/.exec(campaigns)![1]!.replace(',', ''));
  assert.ok(Math.abs(said - gate) / gate < 0.05, `~${said} against ${gate} measured`);
  const slower = /\*\*([\d.]+)×\*\* slower/.exec(row)![1]!;
  assert.match(campaigns, new RegExp(`${slower.replace('.', '\\.')}× slower`));
});

test('every success that is not 200 is one the README names', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  };
  const others = new Set<string>();
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item)) {
      for (const status of Object.keys(operation.responses ?? {})) {
        if (/^2\d\d$/.test(status) && status !== '200') others.add(status);
      }
    }
  }
  assert.deepEqual([...others].sort(), ['202', '206'], 'a background contact import; a byte range of a recording');
  const errors = section(readme, '## Errors');
  assert.doesNotMatch(errors, /every success is HTTP 200\./);
  for (const status of others) assert.match(errors, new RegExp(`\`${status} [A-Z]`));
});

test('the per-call token: the README says a call gets one only if the code gives one', () => {
  const sources = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const path = join(dir, name);
      return statSync(join(ROOT, path)).isDirectory() ? sources(path) : [path];
    });
  const issuers = sources('src')
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('calls.llm.ts'))
    .filter((path) => /\.llmCallToken\(/.test(read(path)))
    .map((path) => relative(ROOT, join(ROOT, path)));
  const proxy = bullet(readme, 'Who may call it');
  if (issuers.length === 0) assert.match(proxy, /no call is given one yet/);
  else assert.doesNotMatch(proxy, /no call is given one/, issuers.join(', '));
});

test("a deleted API key: the README's bound is the cache's lifetime", () => {
  const ttl = Number(
    /const CACHE_TTL_MS = ([\d_]+);/.exec(read('src/modules/api-keys/api-keys.service.ts'))![1]!.replace('_', ''),
  );
  const keys = bullet(readme, '**API keys**');
  assert.match(keys, new RegExp(`a cached key is used ${ttl / 1000} s at most`));
  assert.doesNotMatch(
    keys,
    /fails on the very next request\./,
    'the very next request is only true where it was deleted',
  );
});

test("the tour's recording step says so when the call has no recording", async () => {
  const tour = /```sh\n([\s\S]*?)```/.exec(section(readme, '## A five-minute tour'))![1]!;
  const step = tour.slice(tour.indexOf('# 7.'), tour.indexOf('# 8.'));
  const user = await signUp(t.app);
  const unanswered = await buildCall(user, { status: 'busy' });
  const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const dir = await mkdtemp(join(tmpdir(), 'parley-tour-step-'));
  try {
    const output = await new Promise<string>((resolve, reject) => {
      const bash = spawn('bash', ['-c', step], {
        cwd: dir,
        env: { ...process.env, BASE: `${url}/api`, AUTH: `authorization: Bearer ${user.apiKey}`, CALL: unanswered.id },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      bash.on('error', reject);
      bash.on('close', () => resolve(text));
    });
    assert.match(output, /^No recording: \{"error":"not_found","message":"This call has no recording"/);
    assert.deepEqual(readdirSync(dir), [], 'no ada.wav');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("bench/README.md's API document is within a tenth of today's size (else run bench/openapi-document.ts)", async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  const operations = Object.values(doc.paths).flatMap((item) =>
    Object.keys(item).filter((method) => ['get', 'put', 'post', 'delete', 'patch'].includes(method)),
  ).length;
  const measured = Number(/\| API document \((\d+) operations\)/.exec(section(bench, '## Current figures'))![1]);
  assert.ok(Math.abs(operations - measured) / operations <= 0.1, `${measured} operations measured, ${operations} now`);
});
