/**
 * Contacts in a real browser (test/browser/kit.ts): a CSV imported with its upload progress, then the import's own
 * progress (the server answers at once and imports in the background), then its report; the
 * list and contact pages; the do-not-call list; axe-core on each page at desktop and phone widths.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
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

/** axe's serious and critical findings, and sideways overflow, on each path at 1280 and 375 px. */
async function auditPages(page: Page, paths: string[]) {
  const failures: string[] = [];
  for (const path of paths) {
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(path);
      await page.locator('h1').first().waitFor();
      await page.waitForLoadState('networkidle').catch(() => undefined);
      for (const v of await accessibilityViolations(page))
        failures.push(`${path} @${width}px: ${v.id} (${v.impact}) ${v.help} ${JSON.stringify(v.nodes.slice(0, 3))}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (overflow > 0) failures.push(`${path} @${width}px: the page is ${overflow}px wider than the window`);
    }
  }
  return failures;
}

const CSV = [
  'Phone Number,First Name,Last Name,Email,Company,Plan',
  '+14155550101,Ada,Lovelace,ada@example.com,Analytical,gold',
  '(415) 555-0102,Grace,Hopper,grace@example.com,Navy,silver',
  'not a phone,Bad,Row,,,',
  '+14155550101,Ada,Again,,,',
].join('\n');

test('import a CSV: upload and import progress, then the report and row errors', { skip: BROWSER_SKIP }, () =>
  scenario('contacts-import', async ({ page, context, server }) => {
    const user = await registerUser(server);
    await signInContext(context, server, user.vsid);
    await page.goto('/contacts');
    await page.getByRole('heading', { name: 'No contact lists yet' }).waitFor();
    await page.getByRole('link', { name: 'Import CSV' }).first().click();
    await page.getByRole('heading', { name: 'Import contacts' }).waitFor();
    await page
      .locator('input[type=file]')
      .setInputFiles({ name: 'spring-leads.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) });
    await page.getByText('about 4 data rows').waitFor();
    assert.equal(await page.getByLabel('List name').inputValue(), 'spring-leads');
    await page.getByLabel('Default country').fill('US');
    // The server's answers held back a moment, so that each stage shows: the upload, then the import's progress
    // (the 202 answers at once with the list processing; its progress is read from the list until it is done).
    const hold = () => {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      return { held, release };
    };
    const upload = hold();
    const poll = hold();
    const sent: Array<Record<string, string>> = [];
    await page.route('**/api/v1/contact-lists?*', async (route) => {
      sent.push(route.request().headers());
      await upload.held;
      await route.continue();
    });
    await page.route(/\/api\/v1\/contact-lists\/[0-9a-f-]{36}$/, async (route) => {
      await poll.held;
      await route.continue();
    });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText(/^(Uploading: .* of 1 KB|Uploaded; the server checks)/).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Import' }).isDisabled(), true, 'one import at a time');
    upload.release();

    // At 0% the bar has no width (hidden to Playwright): present, with its value, is what counts here.
    const bar = page.getByRole('progressbar', { name: 'Import progress' });
    await bar.waitFor({ state: 'attached' });
    assert.equal(sent[0]?.prefer, 'respond-async', 'the page asks for a background import');
    assert.match((await bar.getAttribute('aria-valuenow')) ?? '', /^\d+$/);
    await page.getByText(/^Processing: \d+ rows checked, \d+% done$/).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Import' }).isDisabled(), true, 'still one import at a time');
    assert.deepEqual(await accessibilityViolations(page), [], 'the progress is accessible');
    poll.release();

    await page.getByRole('heading', { name: 'Import report' }).waitFor();
    await bar.waitFor({ state: 'detached' });
    assert.equal(await page.getByRole('button', { name: 'Import' }).isDisabled(), false, 'free for the next file');
    await page.getByText('2 of 4 rows imported or updated; 1 could not be imported.').waitFor();
    const report = page.getByRole('region', { name: 'Rows not imported' });
    await report.getByRole('cell', { name: 'not a phone', exact: true }).waitFor();
    const cells = await report.locator('tbody tr').first().locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 2), ['4', 'not a phone'], 'the row of the file, counting the header as row 1');

    await page.getByRole('link', { name: 'Open the list' }).click();
    await page.getByRole('heading', { name: 'spring-leads' }).waitFor();
    const contacts = page.getByRole('region', { name: 'Contacts' });
    await contacts.getByText('+14155550102').waitFor();
    assert.equal(await contacts.locator('tbody tr').count(), 2);
    const exportLink = page.getByRole('link', { name: 'Export these contacts (CSV)' });
    assert.match((await exportLink.getAttribute('href')) ?? '', /^\/api\/v1\/exports\/contacts\.csv\?listId=/);

    // The contact page: an edit with an invalid phone is refused beside the field; the number goes on the DNC list.
    await contacts.getByRole('link', { name: 'Grace Hopper' }).click();
    await page.getByRole('heading', { name: 'Grace Hopper' }).waitFor();
    await page.getByLabel('Phone').fill('12');
    await page.getByRole('button', { name: 'Save' }).click();
    const phoneError = page.getByText(/is not a valid phone number/);
    await phoneError.waitFor();
    assert.equal(
      await page.getByLabel('Phone').getAttribute('aria-describedby'),
      await phoneError.getAttribute('id'),
      'the error is tied to its field',
    );
    await page.getByLabel('Phone').fill('+14155550102');
    await page.getByRole('button', { name: 'Add to the do-not-call list' }).click();
    await page.getByText('This number is on the do-not-call list').waitFor();

    await page.getByRole('link', { name: 'Do not call' }).click();
    await page.getByRole('heading', { name: 'Do-not-call list' }).waitFor();
    await page.getByRole('region', { name: 'Numbers on the list' }).getByText('+14155550102').waitFor();
    await page.getByLabel('Numbers, one a line').fill('+14155550199\nnope');
    await page.getByRole('button', { name: 'Add 2 numbers' }).click();
    await page.getByText('1 added, 0 already on the list, 1 invalid').waitFor();
    await page.getByText(/Line 2: nope/).waitFor();
    await page.getByRole('button', { name: 'Remove +14155550102' }).click();
    await page
      .getByRole('region', { name: 'Numbers on the list' })
      .getByText('+14155550102')
      .waitFor({ state: 'detached' });

    const lists = await server.t.app.inject({
      method: 'GET',
      url: '/api/v1/contact-lists',
      headers: { cookie: `vsid=${user.vsid}` },
    });
    const { contactLists } = lists.json() as { contactLists: Array<{ id: string }> };
    const contact = await server.t.app.inject({
      method: 'GET',
      url: `/api/v1/contact-lists/${contactLists[0]!.id}/contacts`,
      headers: { cookie: `vsid=${user.vsid}` },
    });
    const contactId = (contact.json() as { contacts: Array<{ id: string }> }).contacts[0]!.id;
    const failures = await auditPages(page, [
      '/contacts',
      '/contacts/import',
      `/contacts/lists/${contactLists[0]!.id}`,
      `/contacts/${contactId}`,
      '/dnc',
    ]);
    assert.deepEqual(failures, []);
  }),
);
