/**
 * The agent pages in a real browser: an agent made through the wizard (a refused answer shown beside its question),
 * a part edited and saved, the diff between the two versions, and a PDF imported into the knowledge; axe at 1280 and
 * 375 px on each page, and nothing wider than a phone's screen.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { writePdf } from '../pdf-writer.js';
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

/** axe at the page's width now, then at 375 px with no sideways scroll, then back to 1280 px. */
async function checkBothWidths(page: Page, what: string) {
  assert.deepEqual(await accessibilityViolations(page), [], `${what} passes axe at 1280 px`);
  await page.setViewportSize({ width: 375, height: 800 });
  assert.deepEqual(await accessibilityViolations(page), [], `${what} passes axe at 375 px`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.equal(overflow, 0, `${what} does not scroll sideways at 375 px`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

test('an agent made with the wizard, edited, compared across versions, and given a PDF', { skip: BROWSER_SKIP }, () =>
  scenario('agents', async ({ page, context, server }) => {
    const user = await registerUser(server);
    await signInContext(context, server, user.vsid);

    // The wizard, from the new-agent page.
    await page.goto('/agents/new');
    await page.getByRole('link', { name: 'Start the wizard' }).click();
    await page.waitForURL('**/agents/new/wizard');
    await page.getByRole('radio', { name: 'Customer survey' }).waitFor();
    await checkBothWidths(page, 'the wizard');
    await page.getByRole('radio', { name: 'Customer survey' }).check();
    await page.getByRole('button', { name: 'Next' }).click();

    // A required question left blank is not passed.
    await page.getByText('Question 1 of 8').waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('is required').waitFor();
    await page.getByRole('textbox', { name: 'Business name' }).fill('Harbor Bikes');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Question 2 of 8').waitFor();
    await checkBothWidths(page, 'a wizard question');
    const answers: Record<number, [string, string]> = {
      3: ['What the survey is about', 'the bike repair you had with us'],
      6: ['Transfer number', '12345'],
    };
    for (let question = 2; question <= 8; question++) {
      await page.getByText(`Question ${question} of 8`).waitFor();
      const answer = answers[question];
      if (answer) await page.getByRole('textbox', { name: answer[0] }).fill(answer[1]);
      await page.getByRole('button', { name: question === 8 ? 'Review' : 'Next' }).click();
    }

    // The review; the API refuses the transfer number, shown beside that answer and then beside its question.
    await page.getByRole('heading', { name: 'Review: Customer survey' }).waitFor();
    await checkBothWidths(page, 'the wizard review');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByText('Transfer number must be an E.164 number').waitFor();
    await page.getByRole('button', { name: 'Change Transfer number' }).click();
    const transfer = page.getByRole('textbox', { name: 'Transfer number' });
    assert.equal(await transfer.getAttribute('aria-invalid'), 'true', 'the refused answer is marked at its question');
    await page.getByText('must be an E.164 number, e.g. +14155550123').waitFor();
    await transfer.fill('+14155550123');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Review' }).click();
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.waitForURL(/\/agents\/[0-9a-f-]{36}$/);
    await page.getByText('Version 1', { exact: true }).waitFor();
    const agentId = page.url().split('/').pop()!;
    const made = await server.t.app.inject({
      method: 'GET',
      url: `/api/v1/agents/${agentId}`,
      headers: { cookie: `vsid=${user.vsid}` },
    });
    const agent = made.json() as { name: string; transfer: { number: string | null }; mission: string };
    assert.equal(agent.transfer.number, '+14155550123');
    assert.match(agent.name, /Harbor Bikes/);
    assert.match(agent.mission, /bike repair/, 'the answers filled the blanks');
    await checkBothWidths(page, 'the agent editor');

    // An edited part saved: version 2.
    await page.getByRole('tab', { name: 'Mission' }).click();
    const mission = page.getByRole('textbox', { name: 'Mission' });
    await mission.fill(`${await mission.inputValue()}\nAsk whether the saddle fits.`);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved: version 2.').waitFor();

    // The versions: version 2 against version 1 by default, the added line marked in words, not colour alone.
    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.getByRole('heading', { name: 'Version 1 against version 2' }).waitFor();
    const changes = page.getByRole('region', { name: 'Changes to Mission' });
    await changes.getByText('1 line added, 0 removed').waitFor();
    await changes.getByRole('listitem').filter({ hasText: 'Added: Ask whether the saddle fits.' }).waitFor();
    assert.equal(
      await page.getByRole('region', { name: 'Changes to Soul' }).count(),
      0,
      'only the parts that changed are shown',
    );
    await checkBothWidths(page, 'the versions tab');

    // Version 1 against the empty agent: every line of it added.
    await page.getByRole('button', { name: 'Changes in version 1' }).click();
    await page.getByRole('heading', { name: 'The empty agent against version 1' }).waitFor();
    await page.getByRole('region', { name: 'Changes to Soul' }).waitFor();

    // An older version put back in the editor, unsaved: the import waits until it is saved or discarded.
    await page.getByRole('button', { name: 'Put version 1 in the editor' }).click();
    await page.getByText('Version 1 is in the editor').waitFor();
    await page.getByRole('tab', { name: 'Mission' }).click();
    assert.doesNotMatch(await mission.inputValue(), /saddle/, 'the editor holds version 1');
    await page.getByRole('tab', { name: 'Knowledge' }).click();
    await page.getByText('Save or discard your changes first').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Import the PDF' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Discard changes' }).click();
    await page.getByText('Save or discard your changes first').waitFor({ state: 'detached' });

    // Knowledge: a file that is not a PDF is refused beside the input; a real PDF is imported as version 3.
    const file = page.getByLabel('PDF file');
    await file.setInputFiles({ name: 'hours.pdf', mimeType: 'application/pdf', buffer: Buffer.from('not a pdf') });
    await page.getByRole('button', { name: 'Import the PDF' }).click();
    await page.getByText('The file is not a PDF').waitFor();
    assert.equal(await file.getAttribute('aria-invalid'), 'true');
    const pdf = writePdf([['Harbor Bikes opening hours.', 'Monday to Friday, 9 to 5.'], ['Saturday, 10 to 2.']]);
    await file.setInputFiles({ name: 'hours.pdf', mimeType: 'application/pdf', buffer: pdf });
    await page.getByRole('button', { name: 'Import the PDF' }).click();
    await page.getByText(/Imported 2 pages \(\d+ characters\): saved as version 3/).waitFor();
    await page.getByText('Version 3', { exact: true }).waitFor();
    const knowledge = page.getByRole('textbox', { name: 'Knowledge' });
    assert.match(await knowledge.inputValue(), /Saturday, 10 to 2\./, 'the editor shows the imported text');
    await checkBothWidths(page, 'the knowledge tab');
  }),
);

test('an agent drafted from a description of the business, reviewed, then created', { skip: BROWSER_SKIP }, () =>
  scenario('agents-generated', async ({ page, context, server }) => {
    const user = await registerUser(server);
    await signInContext(context, server, user.vsid);
    await page.goto('/agents/new/wizard');
    const business = page.getByRole('textbox', { name: 'Your business' });
    await business.fill('Bikes');
    await page.getByRole('textbox', { name: 'The goal of its calls' }).fill('Book repair appointments');
    await page.getByRole('button', { name: 'Draft an agent' }).click();
    // The API's field error beside the field it names; nothing drafted.
    await page.getByText('must NOT have fewer than 10 characters').waitFor();
    await business.fill('Harbor Bikes repairs and services city bikes for commuters in Portland.');
    await page.getByRole('button', { name: 'Draft an agent' }).click();
    await page.getByRole('heading', { name: 'The draft' }).waitFor();
    await page.getByRole('button', { name: 'Mission' }).click();
    await checkBothWidths(page, 'the drafted agent');
    const name = await page.getByRole('textbox', { name: 'Agent name' }).inputValue();
    assert.ok(name.length > 0, 'the draft names the agent');
    await page.getByRole('button', { name: 'Create this agent' }).click();
    await page.waitForURL(/\/agents\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { name, exact: true }).waitFor();
    const agentId = page.url().split('/').pop()!;
    const saved = await server.t.app.inject({
      method: 'GET',
      url: `/api/v1/agents/${agentId}`,
      headers: { cookie: `vsid=${user.vsid}` },
    });
    assert.match((saved.json() as { knowledgeBase: string; soul: string }).soul, /\S/, 'the drafted parts were saved');
  }),
);
