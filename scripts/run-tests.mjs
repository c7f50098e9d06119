// Runs the *.test.ts files under src/ and test/, each in a process of its own, as many at once as the machine has
// cores, and prints each file's output as one block under its name once the file is done, then the ten slowest
// files, then the totals (the `ℹ` lines, last: CI reads them). Node 20's --test does not expand globs, and
// interleaves files' output.
//
//   node scripts/run-tests.mjs [word…] [--name <pattern>]… [--watch] [--concurrency <n>]
//
// - words pick the files whose path contains one of them (none: every file);
// - --name (or -n) runs only the tests whose name matches the pattern (a regular expression, node's
//   --test-name-pattern; several are or-ed); the other tests of the picked files are skipped;
// - --watch (or -w) runs them, then again whenever a file under src/ or test/ changes (a run still going is stopped);
// - --concurrency (or the TEST_CONCURRENCY variable) sets how many files run at once; by default one per core.
// Each file runs with --test-force-exit (a file whose tests are done but that leaves a handle open must not hang
// CI) and is stopped, and fails, when still running after FILE_TIMEOUT_MS (or its entry in
// FILE_TIMEOUT_OVERRIDES_MS). The dependencies are loaded before tsx (preload-dependencies.mjs), which makes each
// file start faster.
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync, watch } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FILE_TIMEOUT_MS = 300_000;
// Files allowed longer than FILE_TIMEOUT_MS, each with its reason.
const FILE_TIMEOUT_OVERRIDES_MS = {
  // 2,000 contacts through two dialers and the call engine: about 2 minutes on an idle 2-core machine, over 5 when
  // the machine is loaded (the call engine starts one account's calls one at a time).
  'src/modules/campaigns/campaigns.scale.test.ts': 600_000,
  // Starts, stops and kills some fifteen service processes (and six lock racers), each loading the TypeScript
  // sources: over 5 minutes when the machine is loaded.
  'test/lifecycle.test.ts': 600_000,
  // Two worker processes loading the TypeScript sources, one killed mid-campaign: what it had taken is retried by the
  // other once its jobs expire (2 minutes) and maintenance runs (every 30 s). Under a minute idle, over 5 loaded.
  'src/modules/campaigns/campaigns.crash.test.ts': 600_000,
};
// Browser scenarios (test/browser/) each start a server and a browser page, and some wait for a call on the
// simulated network in real time: a file of them gets 10 minutes.
const BROWSER_FILE_TIMEOUT_MS = 600_000;
const SLOWEST_SHOWN = 10;
const PRELOAD = fileURLToPath(new URL('./preload-dependencies.mjs', import.meta.url));
const COUNTS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'];
const SUMMARY_LINE = /^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+$/;
// How long each file took last time: the longest start first, so a slow file does not start last.
const DURATIONS_FILE = join(
  tmpdir(),
  'parley-test',
  `durations-${process.env.DATABASE_URL ? 'postgres' : 'pglite'}.json`,
);
const USAGE = `Usage: node scripts/run-tests.mjs [word…] [--name <pattern>]… [--watch] [--concurrency <n>]
  word                 run the test files whose path contains it (none: every file)
  -n, --name <regexp>  run only the tests whose name matches (node's --test-name-pattern; repeatable)
  -w, --watch          run again whenever a file under src/ or test/ changes
  --concurrency <n>    files run at once (default: TEST_CONCURRENCY, else one per core)`;

/** The command line, read into words, name patterns and switches; exits with the usage on a mistake. */
function parseArguments(args) {
  const options = { words: [], names: [], watch: false, concurrency: undefined };
  const fail = (message) => {
    console.error(`${message}\n${USAGE}`);
    process.exit(2);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      if (i + 1 >= args.length) fail(`${flag} needs a value`);
      return args[++i];
    };
    if (flag === '--')
      continue; // what npm passes on, or a separator typed by habit
    else if (flag === '-h' || flag === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (flag === '-n' || flag === '--name' || flag === '--test-name-pattern') options.names.push(value());
    else if (flag === '-w' || flag === '--watch') options.watch = true;
    else if (flag === '--concurrency') options.concurrency = value();
    else if (flag.startsWith('-')) fail(`unknown option ${flag}`);
    else options.words.push(arg);
  }
  for (const pattern of options.names) {
    try {
      new RegExp(pattern);
    } catch (error) {
      fail(`--name ${pattern}: ${error.message}`);
    }
  }
  const concurrency = options.concurrency ?? process.env.TEST_CONCURRENCY;
  if (concurrency !== undefined && concurrency !== '') {
    options.concurrency = Number(concurrency);
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      fail(`the concurrency must be a whole number of at least 1, got "${concurrency}"`);
  } else options.concurrency = availableParallelism();
  return options;
}

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
function runFile(file, names) {
  const started = Date.now();
  // A process group of its own, so a timeout or Ctrl-C also stops the servers a test started.
  const child = spawn(
    process.execPath,
    [
      '--import',
      PRELOAD,
      '--import',
      'tsx',
      '--test-reporter=spec',
      '--test-force-exit',
      ...names.map((pattern) => `--test-name-pattern=${pattern}`),
      file,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  running.add(child);
  let timedOut = false;
  const timeoutMs =
    FILE_TIMEOUT_OVERRIDES_MS[file] ?? (file.startsWith('test/browser/') ? BROWSER_FILE_TIMEOUT_MS : FILE_TIMEOUT_MS);
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
        stopped: signal !== null && !timedOut,
        text: `${ok ? '▶' : '✖'} ${file} (${seconds(ms)})${status}\n${body}\n`,
      });
    });
  });
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

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

/** The test files the words pick, relative to the repository (the runner may be started from anywhere). */
function pickFiles(words) {
  const files = ['src', 'test'].flatMap((dir) => findTests(join(ROOT, dir))).map((path) => relative(ROOT, path));
  return (words.length ? files.filter((f) => words.some((word) => f.includes(word))) : files).sort();
}

/** Slowest first, by last run's times. Files not timed yet go first: those that start processes first of all. */
function slowestFirst(files, durations) {
  const rank = (file) => {
    if (durations[file] !== undefined) return [0, 0, durations[file]];
    const source = readFileSync(file, 'utf8');
    return [1, source.includes('node:child_process') ? 1 : 0, source.length];
  };
  const ranks = new Map(files.map((file) => [file, rank(file)]));
  return [...files].sort((a, b) => {
    const [x, y] = [ranks.get(a), ranks.get(b)];
    return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
  });
}

/** One run of `files`; answers false when it was cut short by `run.cancelled`. */
async function runAll(files, options, run = { cancelled: false }) {
  const started = Date.now();
  const durations = readDurations();
  const queue = slowestFirst(files, durations);
  const results = [];
  async function worker() {
    for (let file = queue.shift(); file && !run.cancelled; file = queue.shift()) {
      const result = await runFile(file, options.names);
      if (run.cancelled) return;
      process.stdout.write(`${result.text}\n`);
      results.push(result);
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency, files.length) }, worker));
  if (run.cancelled) return { cancelled: true, ok: false };

  try {
    mkdirSync(join(tmpdir(), 'parley-test'), { recursive: true });
    writeFileSync(
      DURATIONS_FILE,
      JSON.stringify({ ...durations, ...Object.fromEntries(results.map((r) => [r.file, r.ms])) }),
    );
  } catch {
    // only an ordering hint
  }

  const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN);
  if (results.length > 1) {
    const width = Math.max(...slowest.map((r) => seconds(r.ms).length));
    console.log(`slowest files:\n${slowest.map((r) => `  ${seconds(r.ms).padStart(width)}  ${r.file}`).join('\n')}\n`);
  }
  const failed = results.filter((r) => !r.ok);
  if (failed.length) console.log(`✖ failing files:\n${failed.map((r) => `  ${r.file}`).join('\n')}\n`);
  for (const name of COUNTS) console.log(`ℹ ${name} ${results.reduce((sum, r) => sum + r.counts[name], 0)}`);
  console.log(`ℹ duration_ms ${Date.now() - started}`);
  return { cancelled: false, ok: failed.length === 0 };
}

const options = parseArguments(process.argv.slice(2));
process.chdir(ROOT);

if (!options.watch) {
  const files = pickFiles(options.words);
  if (files.length === 0) {
    console.error(`no test file matches ${options.words.join(' ')}`);
    process.exit(1);
  }
  const { ok } = await runAll(files, options);
  process.exit(ok ? 0 : 1);
}

// Watch mode: a change starts the run again (a run still going is stopped first); changes close together count once.
const DEBOUNCE_MS = 200;
let current = null;
let timer = null;

async function startRun() {
  if (current) {
    current.cancelled = true;
    for (const child of running) stopGroup(child);
    await current.done;
  }
  const run = { cancelled: false };
  current = run;
  const files = pickFiles(options.words);
  console.log(`\n── ${new Date().toLocaleTimeString()}: ${files.length} file(s) ──\n`);
  run.done = files.length
    ? runAll(files, options, run)
    : Promise.resolve(console.error(`no test file matches ${options.words.join(' ')}`));
  await run.done;
  if (!run.cancelled) console.log('\nwatching src/ and test/ for changes (Ctrl-C to stop)');
}

function changed(filename) {
  // Editors' swap and backup files are not changes to the code.
  if (filename && /(^|\/)\.|~$|\.swp$/.test(String(filename))) return;
  clearTimeout(timer);
  timer = setTimeout(() => void startRun(), DEBOUNCE_MS);
}

for (const dir of ['src', 'test']) watch(join(ROOT, dir), { recursive: true }, (_event, filename) => changed(filename));
void startRun();
