/** The API keys page in a real browser: a field error from the API, a key shown once that then works, deleted; axe. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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

test('create an API key shown once, use it, delete it', { skip: BROWSER_SKIP }, () =>
  scenario('api-keys', async ({ page, context, server }) => {
    const user = await registerUser(server);
    await signInContext(context, server, user.vsid);
    await page.goto('/settings/api-keys');
    await page.getByText('No API keys yet').waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'the API keys page passes axe');

    // An empty name: the API's field error beside the field.
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('must NOT have fewer than 1 characters').waitFor();

    await page.getByLabel('Name', { exact: true }).fill('CRM sync');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('API key', { exact: true });
    await shown.waitFor();
    const key = await shown.inputValue();
    await page.getByRole('button', { name: 'Copy the api key' }).waitFor();
    const me = await server.t.app.inject({
      method: 'GET',
      url: '/api/v1/auth/me',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(me.statusCode, 200, 'the key shown works');
    assert.deepEqual(await accessibilityViolations(page), [], 'the page with a new key passes axe');

    await page.getByRole('button', { name: 'I have kept it' }).click();
    await page.getByRole('cell', { name: 'CRM sync', exact: true }).waitFor();
    assert.equal((await page.content()).includes(key), false, 'the key is not shown again');

    await page.getByRole('button', { name: 'Delete CRM sync' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete the key' }).click();
    await page.getByText('No API keys yet').waitFor();
    const after = await server.t.app.inject({
      method: 'GET',
      url: '/api/v1/auth/me',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(after.statusCode, 401, 'a deleted key stops working');

    // A phone's width: still accessible, and nothing wider than the screen.
    await page.setViewportSize({ width: 375, height: 800 });
    assert.deepEqual(await accessibilityViolations(page), [], 'axe passes at 375 px too');
    assert.ok(
      await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      'the page does not scroll sideways at 375 px',
    );
  }),
);
