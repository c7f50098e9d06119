/**
 * The dashboard in a real browser (test/browser/kit.ts): signing up and in, with the keyboard alone, deep links,
 * axe-core on every page at desktop and phone widths, and a cross-site form refused.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { insertCall } from '../factories/calls.js';
import {
  BROWSER_SKIP,
  accessibilityViolations,
  closeBrowser,
  ensureDashboardBuilt,
  registerUser,
  scenario,
  signInContext,
} from './kit.js';

before(() => {
  if (!BROWSER_SKIP) ensureDashboardBuilt();
});
after(() => closeBrowser());

test('register, sign out, and sign in again', { skip: BROWSER_SKIP }, () =>
  scenario('register-and-sign-in', async ({ page }) => {
    await page.goto('/');
    await page.waitForURL('**/sign-in');
    await page.getByRole('link', { name: 'Register' }).click();
    // The sign-in form has an Email field too: fill the registration form once it has replaced it.
    await page.getByLabel('Company or team').waitFor();
    await page.getByLabel('Email').fill('grace@example.com');
    await page.getByRole('textbox', { name: 'Password' }).fill('short');
    await page.getByRole('button', { name: 'Register' }).click();
    // The API's field error is shown beside the field it names.
    await page.getByText('must NOT have fewer than 8 characters').waitFor();
    await page.getByRole('textbox', { name: 'Password' }).fill('a long passphrase');
    await page.getByLabel('Company or team').fill('Hopper Labs');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
    await page.getByText('Getting started: 0 of 4 done').waitFor();
    assert.equal(await page.getByText('Hopper Labs').isVisible(), true);

    await page.getByRole('button', { name: /Sign out/ }).click();
    await page.waitForURL('**/sign-in');
    await page.getByLabel('Email').fill('grace@example.com');
    await page.getByRole('textbox', { name: 'Password' }).fill('a wrong passphrase');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .getByText(/email or password/i)
      .waitFor();
    await page.getByRole('textbox', { name: 'Password' }).fill('a long passphrase');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
  }),
);

test('sign in with the keyboard alone', { skip: BROWSER_SKIP }, () =>
  scenario('keyboard-sign-in', async ({ page, server }) => {
    const user = await registerUser(server);
    await page.goto('/sign-in');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('type')),
      'email',
      'Tab reaches Email first',
    );
    await page.keyboard.type(user.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(user.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /Welcome/ }).waitFor();
    // The skip link is the first stop on a signed-in page, and moves focus to the page.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    await page.keyboard.press('Enter');
    // The navigation is reachable by keyboard too.
    await page.getByRole('navigation').getByRole('link', { name: 'Agents' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Agents', exact: true }).waitFor();
  }),
);

test('a deep link opens its page directly, and after signing in when signed out', { skip: BROWSER_SKIP }, () =>
  scenario('deep-link', async ({ page, context, server }) => {
    const user = await registerUser(server);
    const call = await insertCall(server.t.infra.database.db, user.accountId, { status: 'completed' });
    await page.goto(`/calls/${call.id}`);
    await page.waitForURL(`**/sign-in?next=${encodeURIComponent(`/calls/${call.id}`)}`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByRole('textbox', { name: 'Password' }).fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`**/calls/${call.id}`);
    await page.getByRole('heading', { name: /^Call with/ }).waitFor();
    await page.getByText('Sure, what is it about?').waitFor();

    // Opened directly, signed in: the server answers the app, which shows the page.
    await signInContext(context, server, user.vsid);
    const response = await page.goto(`/calls/${call.id}`);
    assert.equal(response?.status(), 200);
    await page.getByRole('heading', { name: /^Call with/ }).waitFor();
    await page.goto('/no/such/page');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    const api = await page.goto('/api/v1/no-such-route');
    assert.equal(api?.status(), 404, 'an unknown API path is the API 404, never the app');
  }),
);

test('every page passes axe (no serious or critical violation), at 1280 and at 375 px', { skip: BROWSER_SKIP }, () =>
  scenario('accessibility', async ({ page, context, server }) => {
    const user = await registerUser(server);
    const agent = await server.t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: { cookie: `vsid=${user.vsid}` },
      payload: { name: 'Sales Sally', mission: 'Book a demo', status: 'active' },
    });
    const agentId = (agent.json() as { id: string }).id;
    const call = await insertCall(server.t.infra.database.db, user.accountId, { status: 'completed' });
    const signedOut = ['/sign-in', '/register'];
    const signedIn = [
      '/',
      '/agents',
      '/agents/new',
      '/agents/new/wizard',
      `/agents/${agentId}`,
      '/test-call',
      '/calls',
      `/calls/${call.id}`,
      '/nope',
    ];
    const failures: string[] = [];
    const check = async (path: string, width: number) => {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(path);
      await page.locator('h1').first().waitFor();
      await page.waitForLoadState('networkidle').catch(() => undefined);
      for (const violation of await accessibilityViolations(page)) {
        failures.push(
          `${path} @${width}px: ${violation.id} (${violation.impact}) ${violation.help} ${JSON.stringify(violation.nodes.slice(0, 3))}`,
        );
      }
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (overflow > 0) failures.push(`${path} @${width}px: the page is ${overflow}px wider than the window`);
    };
    for (const path of signedOut) for (const width of [1280, 375]) await check(path, width);
    await signInContext(context, server, user.vsid);
    for (const path of signedIn) for (const width of [1280, 375]) await check(path, width);
    // Tabs and dialogs: the agent editor's settings tab.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`/agents/${agentId}`);
    await page.getByRole('tab', { name: 'Settings' }).click();
    for (const violation of await accessibilityViolations(page))
      failures.push(`agent settings: ${violation.id} (${violation.impact}) ${violation.help}`);
    assert.deepEqual(failures, []);
  }),
);

test('a form on another site posting with the session cookie is refused', { skip: BROWSER_SKIP }, async () => {
  let evil: Server | null = null;
  try {
    await scenario('cross-site-form', async ({ page, context, server }) => {
      const user = await registerUser(server);
      await signInContext(context, server, user.vsid);
      // Another origin on the same host (another port): the browser still sends the Lax cookie, so only the
      // server's check stands between the form and a new API key.
      evil = createServer((_request, response) => {
        response.setHeader('content-type', 'text/html');
        response.end(`<!doctype html><title>Win a prize</title>
<form method="post" action="${server.url}/api/v1/api-keys" enctype="text/plain">
<input name='{"name":"stolen","x":"' value='"}'></form>
<script>document.forms[0].submit()</script>`);
      });
      await new Promise<void>((resolve) => evil!.listen(0, '127.0.0.1', resolve));
      const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
      const answer = page.waitForResponse((response) => response.url().endsWith('/api/v1/api-keys'));
      await page.goto(evilUrl);
      const response = await answer;
      assert.equal(response.status(), 403);
      const body = (await response.json()) as { error: string; details: { reason: string } };
      assert.equal(body.error, 'forbidden');
      assert.equal(body.details.reason, 'cross_origin');
      const keys = await server.t.app.inject({
        method: 'GET',
        url: '/api/v1/api-keys',
        headers: { cookie: `vsid=${user.vsid}` },
      });
      assert.deepEqual((keys.json() as { apiKeys: unknown[] }).apiKeys, [], 'no key was created');

      // The dashboard's own write, in the same browser, goes through.
      await page.goto('/agents/new');
      await page.getByLabel('Name of the blank agent').fill('Mine');
      await page.getByRole('button', { name: 'Create blank agent' }).click();
      await page.getByRole('heading', { name: 'Mine' }).waitFor();
    });
  } finally {
    (evil as Server | null)?.close();
  }
});
