/**
 * The admin area in a real browser: refused to a user who is not a platform administrator; for one, the calls of
 * every account with their account, a filter, and a call's page; axe.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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

test('the admin area: for platform administrators only, calls of every account', { skip: BROWSER_SKIP }, () =>
  scenario('admin-calls', async ({ page, context, server }) => {
    const db = server.t.infra.database.db;
    const admin = await registerUser(server);
    const other = await registerUser(server);
    await db.updateTable('accounts').set({ name: 'Other Co' }).where('id', '=', other.accountId).execute();
    const call = await insertCall(db, other.accountId, { status: 'completed' });
    await insertCall(db, admin.accountId, { status: 'failed' });

    await signInContext(context, server, admin.vsid);
    await page.goto('/admin');
    await page.getByRole('alert').getByText('Not allowed').waitFor();

    await db.updateTable('users').set({ is_platform_admin: true }).where('email', '=', admin.email).execute();
    await page.reload();
    const table = page.getByRole('region', { name: 'Calls of every account' });
    await table.getByRole('cell', { name: 'Other Co' }).waitFor();
    await table.getByRole('cell', { name: 'Acme Sales' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'the admin page passes axe');

    await page.getByLabel('Account', { exact: true }).selectOption({ label: 'Other Co' });
    await page.getByText('1 call', { exact: true }).waitFor();
    await table.getByRole('link').first().click();
    await page.waitForURL(`**/admin/calls/${call.id}`);
    await page.getByRole('heading', { name: 'Call of Other Co' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'the admin call page passes axe');

    // A phone's width: still accessible, and nothing wider than the screen.
    await page.setViewportSize({ width: 375, height: 800 });
    assert.deepEqual(await accessibilityViolations(page), [], 'axe passes at 375 px too');
    assert.ok(
      await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      'the page does not scroll sideways at 375 px',
    );
  }),
);
