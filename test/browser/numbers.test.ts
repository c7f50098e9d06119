/**
 * Phone numbers in a real browser (test/browser/kit.ts): a number found by area code and bought, then routed to an
 * agent, with its reputation shown; axe-core on each page at desktop and phone widths.
 */
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

test('buy a number found by area code and assign it to an agent', { skip: BROWSER_SKIP }, () =>
  scenario('numbers', async ({ page, context, server }) => {
    const user = await registerUser(server);
    const headers = { cookie: `vsid=${user.vsid}` };
    const agent = await server.t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers,
      payload: { name: 'Support Sam', mission: 'Answer questions', status: 'active' },
    });
    const agentId = (agent.json() as { id: string }).id;
    await signInContext(context, server, user.vsid);

    await page.goto('/numbers');
    await page.getByRole('heading', { name: 'No phone numbers yet' }).waitFor();
    await page.getByRole('link', { name: 'Buy a number' }).first().click();
    await page.getByRole('heading', { name: 'Buy a number' }).waitFor();
    // An area code the API refuses: its message is shown beside the field.
    await page.getByLabel(/^Area code/).fill('4x5');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('must match pattern').waitFor();
    await page.getByLabel(/^Area code/).fill('415');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('region', { name: 'Free numbers' });
    const first = results.getByRole('button', { name: /^Buy \+1415/ }).first();
    const number = ((await first.getAttribute('aria-label')) ?? '').replace('Buy ', '');
    await first.click();
    await page.getByText(`${number} is yours`).waitFor();
    await results.getByRole('button', { name: `Buy ${number}` }).waitFor({ state: 'detached' });

    await page.getByRole('link', { name: 'Assign it to an agent' }).click();
    await page.getByRole('heading', { name: 'Phone numbers', exact: true }).waitFor();
    const picker = page.getByRole('combobox', { name: `Agent for ${number}` });
    await picker.selectOption({ label: 'Support Sam' });
    await page.getByRole('link', { name: 'Open the agent' }).waitFor();
    // The reputation of a number without calls: checked when read, and clean.
    await page.getByLabel(/^Reputation \d+ of 100/).waitFor();
    await page.getByRole('button', { name: `Check now: reputation of ${number}` }).click();

    const numbers = await server.t.app.inject({ method: 'GET', url: '/api/v1/phone-numbers', headers });
    const [owned] = (numbers.json() as { phoneNumbers: Array<{ number: string; agentId: string | null }> })
      .phoneNumbers;
    assert.equal(owned?.number, number);
    assert.equal(owned?.agentId, agentId);

    const failures: string[] = [];
    for (const path of ['/numbers', '/numbers/buy']) {
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
    assert.deepEqual(failures, []);
  }),
);
