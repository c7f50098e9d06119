/**
 * The browser test kit: the dashboard in Debian's Chromium (/usr/bin/chromium, driven by playwright-core; never a
 * downloaded browser), against a fresh server per scenario listening on 127.0.0.1 at a random port.
 *
 *   test('a scenario', { skip: BROWSER_SKIP }, () => scenario('scenario-name', async ({ page, server }) => { … }));
 *
 * Each scenario saves a screenshot to .browser-test/<name>.png (gitignored); when it fails, the page's console
 * errors and failed requests are printed with the error. `checkAccessibility(page)` runs axe-core on the page.
 * The browser tests run once, in the PGlite pass, and are skipped (saying why) where Chromium is not installed;
 * CI installs it (.ci/run).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pino } from 'pino';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startJobWorkers, type JobWorkers } from '../../src/background.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import { PGLITE_PASS_ONLY, ROOT } from '../process-kit.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = join(ROOT, '.browser-test');

/** Why the browser tests do not run here, or false. */
export const BROWSER_SKIP: string | false =
  PGLITE_PASS_ONLY ||
  (existsSync(CHROMIUM)
    ? false
    : `Debian's Chromium is not installed at ${CHROMIUM} (apt-get install chromium; CI installs it): browser tests skipped`);

/** Chromium's switches for this machine: no GPU, no sandbox (root), and no calls home (the network is closed). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];

/**
 * Builds the dashboard unless web/dist/ is already built from these sources (a no-op after npm install).
 * BROWSER_TESTS_KEEP_BUNDLE=1 uses web/dist/ as it is (while iterating on a test, or when another change in
 * progress does not build yet).
 */
export function ensureDashboardBuilt() {
  if (process.env.BROWSER_TESTS_KEEP_BUNDLE === '1' && existsSync(join(ROOT, 'web', 'dist', 'index.html'))) return;
  const result = spawnSync(process.execPath, ['scripts/web.mjs', 'ensure'], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`the dashboard did not build:\n${result.stdout}\n${result.stderr}`);
}

export interface TestServer {
  t: TestApp;
  /** http://127.0.0.1:<port>, the dashboard's origin. */
  url: string;
  close(): Promise<void>;
}

/** Settings a scenario's server may add to the kit's own (the rate limits raised). */
export type ServerEnv = Record<string, string>;

/**
 * A fresh server on 127.0.0.1 at a random port; `workers` runs the job workers too (calls and webhooks need them);
 * `env` adds settings (for example WEBHOOK_ALLOW_PRIVATE, so endpoints may target a receiver on this machine).
 */
export async function startServer(options: { workers?: boolean; env?: ServerEnv } = {}): Promise<TestServer> {
  const t = await buildTestApp({
    env: { RATE_LIMIT_PER_MINUTE: '100000', ANONYMOUS_RATE_LIMIT_PER_MINUTE: '100000', ...options.env },
  });
  let workers: JobWorkers | null = null;
  if (options.workers) {
    workers = await startJobWorkers({
      db: t.infra.database.db,
      services: t.services,
      log: pino({ level: 'silent' }),
      pollingIntervalSeconds: 0.5,
    });
  }
  const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    t,
    url,
    async close() {
      await workers?.stop(10_000);
      await t.close();
    },
  };
}

let browser: Promise<Browser> | null = null;

/** One Chromium for the test file; each scenario gets a context of its own (fresh cookies and storage). */
export function sharedBrowser(): Promise<Browser> {
  browser ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  return browser;
}

export async function closeBrowser() {
  if (browser) await (await browser).close();
  browser = null;
}

export interface ScenarioContext {
  page: Page;
  context: BrowserContext;
  server: TestServer;
}

/**
 * Runs one scenario in a new browser context against a fresh server, saves a screenshot, and on failure prints
 * what the page logged.
 */
export async function scenario(
  name: string,
  run: (scenario: ScenarioContext) => Promise<void>,
  options: { workers?: boolean; env?: ServerEnv; viewport?: { width: number; height: number } } = {},
) {
  const server = await startServer({ workers: options.workers, env: options.env });
  const context = await (await sharedBrowser()).newContext({
    baseURL: server.url,
    viewport: options.viewport ?? { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) =>
    problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`),
  );
  mkdirSync(SCREENSHOTS, { recursive: true });
  try {
    await run({ page, context, server });
  } catch (error) {
    console.error(
      `scenario "${name}" failed on ${page.url()}; what the page logged:\n${problems.join('\n') || '(nothing)'}`,
    );
    throw error;
  } finally {
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true }).catch(() => undefined);
    await context.close();
    await server.close();
  }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** axe-core's serious and critical violations on the page as it is now (the page's own CSP stays on). */
export async function accessibilityViolations(page: Page): Promise<AxeViolation[]> {
  // A dialog fading out is half transparent: axe reads the page once every finite transition has ended and React
  // has removed what they hid (two frames later); spinners run forever and are not waited for.
  await page.evaluate(async () => {
    const ending = document
      .getAnimations()
      .filter((animation) => Number.isFinite(Number(animation.effect?.getComputedTiming().endTime)));
    await Promise.all(ending.map((animation) => animation.finished.catch(() => undefined)));
    for (let frame = 0; frame < 2; frame++) await new Promise((resolve) => requestAnimationFrame(resolve));
  });
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    const results = await axe.run(document, { resultTypes: ['violations'] });
    return results.violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({ ...violation, nodes: violation.nodes.map((node) => ({ target: node.target })) }));
}

/** Registers a user through the API (the kit's way to start signed in) and answers its email and password. */
export async function registerUser(
  server: TestServer,
  email = `user-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`,
) {
  const password = 'a long passphrase';
  const response = await server.t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email, password, name: 'Ada', accountName: 'Acme Sales' },
  });
  if (response.statusCode !== 200) throw new Error(`register failed: ${response.body}`);
  const vsid = response.cookies.find((cookie) => cookie.name === 'vsid')!.value;
  const { accountId } = response.json() as { accountId: string };
  return { email, password, vsid, accountId };
}

/** Signs the browser context in with a session made through the API. */
export async function signInContext(context: BrowserContext, server: TestServer, vsid: string) {
  await context.addCookies([{ name: 'vsid', value: vsid, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
}
