/**
 * The calls list in a real browser (test/browser/kit.ts): its first page, a filter and paging, each shown from one
 * list request (the page starts it beside the session check), and a deep link to it when signed out.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { insertCall } from '../factories/calls.js';
import { BROWSER_SKIP, closeBrowser, ensureDashboardBuilt, registerUser, scenario, signInContext } from './kit.js';

before(() => {
  if (!BROWSER_SKIP) ensureDashboardBuilt();
});
after(() => closeBrowser());

test('the calls list: first page, a status filter and paging, one list request each', { skip: BROWSER_SKIP }, () =>
  scenario('calls-list', async ({ page, context, server }) => {
    const user = await registerUser(server);
    const db = server.t.infra.database.db;
    const minute = 60_000;
    for (let i = 0; i < 30; i++) {
      await insertCall(db, user.accountId, {
        status: i % 3 === 0 ? 'no_answer' : 'completed',
        createdAt: new Date(Date.now() - (i + 1) * minute),
      });
    }
    const listRequests: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/v1/calls') listRequests.push(url.search);
    });
    const rows = page.getByRole('region', { name: 'Calls' }).locator('tbody tr');

    // Signed out, the link goes to sign in, and back to the list after.
    await page.goto('/calls');
    await page.waitForURL(`**/sign-in?next=${encodeURIComponent('/calls')}`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByRole('textbox', { name: 'Password' }).fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/calls');
    await page.getByText('30 calls').waitFor();
    assert.equal(await rows.count(), 25);

    // Opened signed in: the first page from one request.
    await signInContext(context, server, user.vsid);
    listRequests.length = 0;
    await page.goto('/calls');
    await page.getByText('30 calls').waitFor();
    assert.equal(await rows.count(), 25);
    assert.deepEqual(listRequests, ['?limit=25&offset=0']);

    // A status filter: the address keeps it, one more request.
    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'no answer', exact: true }).click();
    await page.waitForURL('**/calls?status=no_answer');
    await page.getByText('10 calls').waitFor();
    assert.equal(await rows.count(), 10);
    assert.deepEqual(await rows.locator('td:nth-child(4)').allTextContents(), Array(10).fill('no answer'));
    assert.deepEqual(listRequests, ['?limit=25&offset=0', '?limit=25&offset=0&status=no_answer']);

    // The second page of all calls.
    await page.goto('/calls?page=2');
    await page.getByRole('button', { name: 'Page 2' }).waitFor();
    await rows.nth(4).waitFor();
    assert.equal(await rows.count(), 5);
    assert.equal(listRequests.at(-1), '?limit=25&offset=25');
    assert.equal(listRequests.length, 3);
  }),
);
