/**
 * The dashboard's calls page (/calls) on an account with 1,000,000 calls, in Chromium: navigation start to the
 * first page of rows on screen, against the API request the page makes and a static page showing the same rows.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/dashboard-calls.ts
 *
 * Creates a fresh database with the calls of bench/calls-list.ts, serves the real app (with the built dashboard,
 * web/dist/) on 127.0.0.1, signs a user of that account into Debian's Chromium (/usr/bin/chromium, through
 * playwright-core, as the browser tests do) and times, in the page (the Performance API and a MutationObserver):
 * - the page, cold (a new browser context each run: empty cache, new session) and warm (reloads in one context);
 * - baseline (a): the page's own `GET /api/v1/calls?...` timed from the browser's fetch (response read and parsed);
 * - baseline (b): a static HTML page from a bare node:http server that fetches the same JSON (the bytes the API
 *   answered) and renders it into a table: the floor for a browser showing these rows;
 * - the status and agent filters, chosen in the page as a user does, once each.
 * The database is dropped at the end. Env: CALLS (default 1000000), COLD and WARM runs (default 5 and 10),
 * PROFILE=1 (the page's main thread during a cold and a warm run, by trace event), BUNDLE_LOCK (see holdBundle).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/lib/clock.js';
import { openInfrastructure } from '../src/runtime.js';
import { closeBrowser, sharedBrowser } from '../test/browser/kit.js';
import { signUp } from '../test/helpers.js';
import { ROOT } from '../test/process-kit.js';
import { AGENTS, CONTACTS, createBenchDatabase, seedCalls } from './calls-data.js';

const CALLS = Number(process.env.CALLS ?? 1_000_000);
const COLD = Number(process.env.COLD ?? 5);
const WARM = Number(process.env.WARM ?? 10);
const PAGE_SIZE = 25;
const GOAL_MS = 1000;

if (!process.env.DATABASE_URL) {
  console.error('bench/dashboard-calls.ts needs DATABASE_URL (a PostgreSQL server it may create a database on)');
  process.exit(2);
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
const seconds = (start: number) => `${((performance.now() - start) / 1000).toFixed(1)} s`;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const summary = (values: number[]) => ({ p50: percentile(values, 50), max: Math.max(...values) });
const fmt = (value: number) => `${value.toFixed(0)} ms`;

/**
 * Holds the dashboard build lock (BUNDLE_LOCK, default /tmp/web-build.lock, which the browser tests and builds of
 * this checkout take) while the browser runs, so the bundle cannot change under it; builds web/dist/ first only
 * when there is none. Released when the returned function is called, or when this process ends (flock's stdin
 * closes). `BUNDLE_LOCK=` (empty) takes no lock: for a checkout whose bundle nobody else builds.
 */
async function holdBundle() {
  const lock = process.env.BUNDLE_LOCK ?? '/tmp/web-build.lock';
  let release = () => {};
  if (lock) {
    const holder = spawn('flock', [lock, 'sh', '-c', 'echo locked; cat >/dev/null'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      holder.stdout.once('data', () => resolve());
      holder.once('exit', (code) => reject(new Error(`flock exited (${code})`)));
    });
    release = () => holder.stdin.end();
  }
  if (!existsSync(join(ROOT, 'web', 'dist', 'index.html'))) {
    console.log('web/dist/ has no bundle: building it (npm run build:web)');
    const result = spawnSync('npm', ['run', 'build:web'], { cwd: ROOT, stdio: 'inherit' });
    if (result.status !== 0) {
      release();
      throw new Error('the dashboard did not build');
    }
  }
  return release;
}

/**
 * Runs in every document before its own scripts: `window.__watch(expected, match)` resolves with the times (ms since
 * navigation start) the table named "Calls" first holds `expected` rows (every one with `match.text` in cell
 * `match.cell`, if given): at the DOM change, and at the start of the next frame (the one that paints them).
 * `window.__rows` watches for the first page of any rows. A string, not a function: tsx would wrap the function's
 * inner closures in a helper the page does not have.
 */
const WATCH_ROWS = `
window.__watch = (expected, match) => new Promise((resolve) => {
  const check = () => {
    const rows = document.querySelectorAll('[role="region"][aria-label="Calls"] tbody tr');
    if (rows.length < expected) return;
    if (match && ![...rows].every((row) => row.querySelectorAll('td')[match.cell]?.textContent === match.text)) return;
    observer.disconnect();
    const domAt = performance.now();
    requestAnimationFrame(() => resolve({ domAt, frameAt: performance.now() }));
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { childList: true, subtree: true, characterData: true });
  check();
});
window.__rows = window.__watch(${PAGE_SIZE}, null);
`;

/** What a navigation's resources did, ms from navigation start, to show where the time goes. */
async function waterfall(page: Page) {
  return page.evaluate(() =>
    [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map((entry) => {
      const e = entry as PerformanceResourceTiming;
      return {
        name: e.name.replace(location.origin, ''),
        start: e.startTime,
        end: e.responseEnd,
        bytes: e.transferSize,
      };
    }),
  );
}

async function timeNavigation(page: Page, url: string) {
  await page.goto(url, { waitUntil: 'commit' });
  const rows = await page.evaluate(() => (window as unknown as { __rows: Promise<{ frameAt: number }> }).__rows);
  return rows.frameAt;
}

/** A bare node:http server answering a page that fetches `rows.json` (the API's answer) and renders it as a table. */
async function startStaticPage(body: string) {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Calls</title></head><body>
<div role="region" aria-label="Calls"><table><thead><tr><th>When</th><th>Who</th><th>Agent</th><th>Status</th>
<th>Duration</th><th>Cost</th><th>Disposition</th></tr></thead><tbody></tbody></table></div>
<script>
fetch('/rows.json').then((r) => r.json()).then(({ calls }) => {
  const tbody = document.querySelector('tbody');
  const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  for (const c of calls) {
    const tr = document.createElement('tr');
    const who = [c.contactFirstName, c.contactLastName].filter(Boolean).join(' ') || c.contactPhone || '—';
    for (const text of [when.format(new Date(c.createdAt)), who, c.agentName ?? '—', c.status,
      c.durationSeconds == null ? '—' : c.durationSeconds + ' s', '$' + c.totalCostUsd, c.disposition ?? '—']) {
      const td = document.createElement('td');
      td.textContent = text;
      tr.append(td);
    }
    tbody.append(tr);
  }
});
</script></body></html>`;
  const server = createServer((req, res) => {
    if (req.url === '/rows.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(body);
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
      res.end(html);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function newContext(browser: Browser, origin: string, vsid: string | null) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript({ content: WATCH_ROWS });
  if (vsid) await context.addCookies([{ name: 'vsid', value: vsid, url: origin, httpOnly: true, sameSite: 'Lax' }]);
  return context;
}

type Waterfall = Awaited<ReturnType<typeof waterfall>>;

/**
 * A first visit (the server compresses each file of the bundle on its first request, once per process), then cold
 * runs (a new context each: empty cache, nothing compiled) and warm runs (reloads in one context) of `path`.
 */
async function timePage(browser: Browser, origin: string, path: string, vsid: string | null) {
  const visit = async () => {
    const context = await newContext(browser, origin, vsid);
    const page = await context.newPage();
    const at = await timeNavigation(page, origin + path);
    const entries = await waterfall(page);
    await context.close();
    return { at, entries };
  };
  const first = await visit();
  const cold: number[] = [];
  let coldWaterfall: Waterfall = [];
  for (let i = 0; i < COLD; i++) {
    const run = await visit();
    cold.push(run.at);
    coldWaterfall = run.entries;
  }
  const context = await newContext(browser, origin, vsid);
  const page = await context.newPage();
  await timeNavigation(page, origin + path);
  const warm: number[] = [];
  for (let i = 0; i < WARM; i++) warm.push(await timeNavigation(page, origin + path));
  const warmWaterfall = await waterfall(page);
  return { first, cold, warm, coldWaterfall, warmWaterfall, context, page };
}

/** A navigation's requests in order; the bundle's files fetched together are one line. */
function printWaterfall(title: string, entries: Waterfall, rowsAt: number) {
  console.log(`  ${title}`);
  const line = (start: number, end: number, bytes: number, name: string) =>
    console.log(
      `    ${fmt(start).padStart(7)} → ${fmt(end).padStart(7)}  ${(bytes / 1024).toFixed(1).padStart(6)} KB  ${name}`,
    );
  let group: Waterfall = [];
  const flush = () => {
    if (group.length === 0) return;
    const first = group[0]!;
    line(
      first.start,
      Math.max(...group.map((e) => e.end)),
      group.reduce((sum, e) => sum + e.bytes, 0),
      group.length === 1 ? first.name : `${group.length} files from ${first.name}`,
    );
    group = [];
  };
  for (const entry of entries) {
    if (entry.name.startsWith('/assets/') && (group.length === 0 || entry.start - group[0]!.start < 50)) {
      group.push(entry);
      continue;
    }
    flush();
    if (entry.name.startsWith('/assets/')) group.push(entry);
    else line(entry.start, entry.end, entry.bytes, entry.name || '(document)');
  }
  flush();
  console.log(`    rows on screen at ${fmt(rowsAt)}`);
}

/**
 * PROFILE=1: where the renderer's main thread spends one navigation (a Chromium trace), as self time by trace event:
 * script (EvaluateScript, FunctionCall, v8.compile), style (UpdateLayoutTree), Layout, Paint, HTML and CSS parsing.
 */
async function profileNavigation(browser: Browser, page: Page, url: string, label: string) {
  await browser.startTracing(page, { categories: ['devtools.timeline', 'v8', 'blink', 'loading'] });
  const at = await timeNavigation(page, url);
  const trace = JSON.parse((await browser.stopTracing()).toString('utf8')) as {
    traceEvents: {
      name: string;
      ph: string;
      ts: number;
      dur?: number;
      pid: number;
      tid: number;
      args?: { name?: string };
    }[];
  };
  const main = trace.traceEvents.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  // The page's renderer: the main thread that ran the most work.
  const work = (pid: number, tid: number) =>
    trace.traceEvents.filter((e) => e.ph === 'X' && e.pid === pid && e.tid === tid && e.dur !== undefined);
  const threads = main.map((t) => work(t.pid, t.tid)).sort((x, y) => y.length - x.length);
  const events = (threads[0] ?? []).sort((x, y) => x.ts - y.ts || y.dur! - x.dur!);
  const self = new Map<string, number>();
  const stack: { end: number; name: string }[] = [];
  for (const event of events) {
    while (stack.length && stack.at(-1)!.end <= event.ts) stack.pop();
    const parent = stack.at(-1);
    if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - event.dur!);
    self.set(event.name, (self.get(event.name) ?? 0) + event.dur!);
    stack.push({ end: event.ts + event.dur!, name: event.name });
  }
  const top = [...self].sort((x, y) => y[1] - x[1]).slice(0, 12);
  const busy = [...self.values()].reduce((sum, value) => sum + value, 0);
  console.log(
    `\n  main thread of one ${label} run (rows at ${fmt(at)}; busy ${fmt(busy / 1000)}), self time by trace event:`,
  );
  for (const [name, us] of top) console.log(`    ${fmt(us / 1000).padStart(7)}  ${name}`);
}

/** Chooses `option` in the Select labelled `label` and times the click to the filtered rows on screen. */
async function timeFilter(page: Page, label: string, option: string, match: { cell: number; text: string }) {
  await page.getByRole('combobox', { name: label }).click();
  const choice = page.getByRole('option', { name: option, exact: true });
  await choice.waitFor();
  await page.evaluate(
    ({ expected, match }) => {
      const w = window as unknown as {
        __filter: Promise<{ frameAt: number }>;
        __clickAt: number;
        __watch: (expected: number, match: { cell: number; text: string }) => Promise<{ frameAt: number }>;
      };
      document.addEventListener(
        'click',
        (event) => {
          if ((event.target as Element).closest('[role="option"]')) w.__clickAt = performance.now();
        },
        { capture: true, once: true },
      );
      w.__filter = w.__watch(expected, match);
    },
    { expected: PAGE_SIZE, match },
  );
  await choice.click();
  return page.evaluate(async () => {
    const w = window as unknown as { __filter: Promise<{ frameAt: number }>; __clickAt: number };
    const { frameAt } = await w.__filter;
    return frameAt - w.__clickAt;
  });
}

async function main(databaseUrl: string) {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    ANON_RATE_LIMIT_PER_MINUTE: '1000000',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  });
  const infra = await openInfrastructure(config, { redisKeyPrefix: `parley-bench:${Date.now()}:` });
  const { app } = await buildApp({ config, ...infra, clock: systemClock, logger: false });
  let browser: Browser | null = null;
  let releaseBundle = () => {};
  const contexts: BrowserContext[] = [];
  try {
    await app.ready();
    const owner = await signUp(app);
    const vsid = owner.cookie.slice('vsid='.length);
    const db = infra.database.db;
    await db
      .updateTable('accounts')
      .set({ rate_limit_per_minute: 100_000_000 })
      .where('id', '=', owner.accountId)
      .execute();
    const seeder = new pg.Client({ connectionString: databaseUrl });
    await seeder.connect();
    const seedStart = performance.now();
    try {
      await seedCalls(seeder, owner.accountId, CALLS);
    } finally {
      await seeder.end();
    }
    console.log(
      `seeded ${CALLS.toLocaleString('en')} calls (+ ${CONTACTS.toLocaleString('en')} contacts, ${AGENTS} agents) in ${seconds(seedStart)}; load ${load()}`,
    );
    const waitedAt = performance.now();
    releaseBundle = await holdBundle();
    console.log(`(waited ${seconds(waitedAt)} for the dashboard build lock)`);
    const origin = (await app.listen({ host: '127.0.0.1', port: 0 })).replace(/\/$/, '');
    browser = await sharedBrowser();
    console.log(`Chromium ${browser.version()}, 1280×900, headless; ${COLD} cold runs, then ${WARM} warm\n`);

    // The page: cold, then warm; the request it makes for the list is the one baseline (a) repeats.
    const loadBefore = load();
    const pageRuns = await timePage(browser, origin, '/calls', vsid);
    contexts.push(pageRuns.context);
    const loadAfter = load();
    const listRequest = pageRuns.warmWaterfall.find((e) => e.name.startsWith('/api/v1/calls?'))?.name;
    if (!listRequest) throw new Error('the page made no GET /api/v1/calls request');

    // (a) The same request from the browser's fetch, in the signed-in page.
    const apiTimes = await pageRuns.page.evaluate(
      async ({ path, runs }) => {
        const times: number[] = [];
        let body = '';
        for (let i = 0; i < runs; i++) {
          const t0 = performance.now();
          const response = await fetch(path);
          body = await response.text();
          JSON.parse(body);
          times.push(performance.now() - t0);
        }
        return { times, body };
      },
      { path: listRequest, runs: COLD + WARM },
    );
    const apiCold = apiTimes.times.slice(0, 1);
    const apiWarm = apiTimes.times.slice(1);

    // (b) A static page rendering the same rows.
    const staticPage = await startStaticPage(apiTimes.body);
    const staticRuns = await timePage(browser, staticPage.url.replace(/\/$/, ''), '/', null);
    await staticRuns.context.close();
    await staticPage.close();

    const page = summary(pageRuns.cold);
    const warm = summary(pageRuns.warm);
    const api = summary(apiTimes.times);
    const stat = summary(staticRuns.cold);
    const statWarm = summary(staticRuns.warm);
    console.log(`/calls, first ${PAGE_SIZE} rows on screen (navigation start → the frame that paints them):`);
    console.log(`  request the page makes: GET ${listRequest}`);
    console.log(`  first visit after the server started: ${fmt(pageRuns.first.at)}`);
    console.log(`  page, cold:  p50 ${fmt(page.p50)}, max ${fmt(page.max)}  (${pageRuns.cold.map(fmt).join(', ')})`);
    console.log(`  page, warm:  p50 ${fmt(warm.p50)}, max ${fmt(warm.max)}  (${pageRuns.warm.map(fmt).join(', ')})`);
    console.log(
      `  (a) API from the browser's fetch: p50 ${fmt(api.p50)}, max ${fmt(api.max)} (first ${fmt(apiCold[0]!)}, then p50 ${fmt(percentile(apiWarm, 50))})`,
    );
    console.log(
      `  (b) static page, same rows: cold p50 ${fmt(stat.p50)}, max ${fmt(stat.max)}; warm p50 ${fmt(statWarm.p50)}, max ${fmt(statWarm.max)}`,
    );
    console.log(
      `  ratios (p50): cold page/API ${(page.p50 / api.p50).toFixed(1)}, cold page/static ${(page.p50 / stat.p50).toFixed(1)}; ` +
        `warm page/API ${(warm.p50 / api.p50).toFixed(1)}, warm page/static ${(warm.p50 / statWarm.p50).toFixed(1)}`,
    );
    console.log(
      `  goal: under ${GOAL_MS} ms: cold max ${page.max < GOAL_MS ? 'met' : 'MISSED'}, warm max ${warm.max < GOAL_MS ? 'met' : 'MISSED'}`,
    );
    console.log(`  load average: ${loadBefore} before, ${loadAfter} after\n`);
    printWaterfall('last cold run, where the time goes:', pageRuns.coldWaterfall, pageRuns.cold.at(-1)!);
    printWaterfall('last warm run:', pageRuns.warmWaterfall, pageRuns.warm.at(-1)!);
    if (process.env.PROFILE === '1') {
      const cold = await newContext(browser, origin, vsid);
      await profileNavigation(browser, await cold.newPage(), `${origin}/calls`, 'cold');
      await cold.close();
      await profileNavigation(browser, pageRuns.page, `${origin}/calls`, 'warm');
    }

    // The filters, chosen in the page: from the click on the option to the filtered rows on screen.
    await timeNavigation(pageRuns.page, `${origin}/calls`);
    const status = await timeFilter(pageRuns.page, 'Status', 'no answer', { cell: 3, text: 'no answer' });
    await timeNavigation(pageRuns.page, `${origin}/calls`);
    const agent = await timeFilter(pageRuns.page, 'Agent', 'Agent 7', { cell: 2, text: 'Agent 7' });
    const statusPath = `/calls?status=no_answer`;
    const linked = await timeNavigation(pageRuns.page, origin + statusPath);
    console.log(`\nfilters (click on the option → the filtered rows on screen; load ${load()}):`);
    console.log(`  status = no answer: ${fmt(status)}`);
    console.log(`  agent = Agent 7:    ${fmt(agent)}`);
    console.log(`  ${statusPath} opened as a link (warm): ${fmt(linked)}`);
  } catch (error) {
    console.error(error); // before closing the app, in case closing fails too
    throw error;
  } finally {
    for (const context of contexts) await context.close().catch(() => undefined);
    if (browser) await closeBrowser();
    releaseBundle();
    await app.close();
    await infra.close();
  }
}

const database = await createBenchDatabase(process.env.DATABASE_URL, 'dashboard_calls');
const startedAt = performance.now();
try {
  await main(database.url);
} finally {
  await database.drop();
  console.log(`\nbench database dropped; whole run ${seconds(startedAt)}`);
}
