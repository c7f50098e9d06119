// Runs every *.test.ts under src/ and test/ (or those whose path contains one of the words given), each file
// in a process of its own, two at a time, and prints each file's output as one block under its name once the
// file is done, then the totals. (Node 20's --test does not expand globs, and interleaves files' output.)
// - --test-force-exit: a file whose tests are done but that leaves a handle open must not hang CI;
// - a file still running after FILE_TIMEOUT_MS (or its entry in FILE_TIMEOUT_OVERRIDES_MS) is stopped and fails
//   (what --test-timeout did per file);
// - the dependencies are loaded before tsx (preload-dependencies.mjs), which makes each file start faster.
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CONCURRENCY = 2;
const FILE_TIMEOUT_MS = 300_000;
// Files allowed longer than FILE_TIMEOUT_MS, each with its reason.
const FILE_TIMEOUT_OVERRIDES_MS = {
  // 2,000 contacts through two dialers and the call engine: about 2 minutes on an idle 2-core machine, over 5 when
  // the machine is loaded (the call engine starts one account's calls one at a time).
  'src/modules/campaigns/campaigns-scale.test.ts': 600_000,
  // Starts, stops and kills some fifteen service processes, each loading the TypeScript sources: about 3 minutes on an
  // idle 2-core machine, over 5 when the machine is loaded.
  'test/lifecycle.test.ts': 600_000,
};
const PRELOAD = fileURLToPath(new URL('./preload-dependencies.mjs', import.meta.url));
const COUNTS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'];
const SUMMARY_LINE = /^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+$/;
// How long each file took last time: the longest start first, so a slow file does not start last.
const DURATIONS_FILE = join(
  tmpdir(),
  'parley-test',
  `durations-${process.env.DATABASE_URL ? 'postgres' : 'pglite'}.json`,
);

function findTests(dir) {
  let found = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found = found.concat(findTests(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

function readDurations() {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
  } catch {
    return {};
  }
}

const running = new Set();

/** Runs one file; resolves with its output, its counts and whether it passed. */
function runFile(file) {
  const started = Date.now();
  // A process group of its own, so a timeout or Ctrl-C also stops the servers a test started.
  const child = spawn(
    process.execPath,
    ['--import', PRELOAD, '--import', 'tsx', '--test-reporter=spec', '--test-force-exit', file],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  running.add(child);
  let timedOut = false;
  const timeoutMs = FILE_TIMEOUT_OVERRIDES_MS[file] ?? FILE_TIMEOUT_MS;
  const timer = setTimeout(() => {
    timedOut = true;
    stopGroup(child);
  }, timeoutMs);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      const counts = Object.fromEntries(COUNTS.map((name) => [name, 0]));
      const lines = [];
      for (const line of output.split('\n')) {
        const match = SUMMARY_LINE.exec(line);
        if (!match) lines.push(line);
        else if (match[1] !== 'duration_ms') counts[match[1]] = Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      const ms = Date.now() - started;
      const ok = code === 0 && counts.fail === 0 && counts.cancelled === 0;
      // A file that crashed or was stopped counts as one failed test, as it did under node --test.
      if (!ok && counts.fail === 0 && counts.cancelled === 0) {
        counts.tests += 1;
        counts.fail += 1;
      }
      const status = timedOut
        ? ` (stopped: still running after ${timeoutMs / 1000} s)`
        : ok
          ? ''
          : signal
            ? ` (killed by ${signal})`
            : ` (exit code ${code})`;
      const body = lines.join('\n').trim();
      resolve({
        file,
        ms,
        counts,
        ok,
        text: `${ok ? '▶' : '✖'} ${file} (${(ms / 1000).toFixed(1)} s)${status}\n${body}\n`,
      });
    });
  });
}

function stopGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) stopGroup(child);
    process.exit(130);
  });
}

const filter = process.argv.slice(2);
let files = ['src', 'test'].flatMap(findTests).sort();
if (filter.length) files = files.filter((f) => filter.some((word) => f.includes(word)));
if (files.length === 0) {
  console.error(`no test file matches ${filter.join(' ')}`);
  process.exit(1);
}

const started = Date.now();
const durations = readDurations();
// Slowest first. Files not timed yet go before the rest: those that start processes of their own first of
// all, then the longest.
function rank(file) {
  if (durations[file] !== undefined) return [0, 0, durations[file]];
  const source = readFileSync(file, 'utf8');
  return [1, source.includes('node:child_process') ? 1 : 0, source.length];
}
const ranks = new Map(files.map((file) => [file, rank(file)]));
const slowerFirst = (a, b) => {
  const [x, y] = [ranks.get(a), ranks.get(b)];
  return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
};
const queue = [...files].sort(slowerFirst);
const results = [];
async function worker() {
  for (let file = queue.shift(); file; file = queue.shift()) {
    const result = await runFile(file);
    process.stdout.write(result.text + '\n');
    results.push(result);
  }
}
await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));

try {
  mkdirSync(join(tmpdir(), 'parley-test'), { recursive: true });
  writeFileSync(
    DURATIONS_FILE,
    JSON.stringify({ ...durations, ...Object.fromEntries(results.map((r) => [r.file, r.ms])) }),
  );
} catch {
  // only an ordering hint
}

const failed = results.filter((r) => !r.ok);
if (failed.length) console.log(`✖ failing files:\n${failed.map((r) => `  ${r.file}`).join('\n')}\n`);
for (const name of COUNTS) console.log(`ℹ ${name} ${results.reduce((sum, r) => sum + r.counts[name], 0)}`);
console.log(`ℹ duration_ms ${Date.now() - started}`);
process.exit(failed.length ? 1 : 0);
