/**
 * Campaigns in a real browser (test/browser/kit.ts): one created from the form, started, its statistics shown with the
 * abandon rate against its two marks, then paused; axe-core on each campaign page at desktop and phone widths.
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

test('a campaign created and started shows its statistics, then pauses', { skip: BROWSER_SKIP }, () =>
  scenario('campaigns', async ({ page, context, server }) => {
    const user = await registerUser(server);
    const headers = { cookie: `vsid=${user.vsid}` };
    const agent = await server.t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers,
      payload: { name: 'Sales Sally', mission: 'Book a demo', status: 'active' },
    });
    assert.equal(agent.statusCode, 200, agent.body);
    const list = await server.t.app.inject({
      method: 'POST',
      url: '/api/v1/contact-lists?name=Spring%20leads',
      headers: { ...headers, 'content-type': 'text/csv' },
      payload: 'phone,first_name\n+14155550101,Ada\n+14155550102,Grace\n+14155550103,Alan\n',
    });
    assert.equal(list.statusCode, 200, list.body);
    await signInContext(context, server, user.vsid);

    await page.goto('/campaigns');
    await page.getByRole('heading', { name: 'No campaigns yet' }).waitFor();
    await page.getByRole('link', { name: 'New campaign' }).first().click();
    await page.getByRole('heading', { name: 'New campaign' }).waitFor();
    await page.getByLabel(/^Name/).fill('Spring push');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByText('Choose the agent that makes the calls').waitFor();
    await page.getByRole('combobox', { name: 'Agent' }).click();
    await page.getByRole('option', { name: 'Sales Sally (active)' }).click();
    // No list chosen: the API's error appears beside the field.
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByText('must NOT have fewer than 1 items').waitFor();
    await page.getByRole('combobox', { name: 'Contact lists' }).click();
    await page.getByRole('option', { name: /Spring leads/ }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Create campaign' }).click();

    await page.getByRole('heading', { name: 'Spring push' }).waitFor();
    await page.getByText('draft', { exact: true }).waitFor();
    await page.getByText('0 of 0 contacts finished', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByText('running', { exact: true }).waitFor();
    // Starting loads the lists' contacts: the statistics count them.
    await page.getByText('0 of 3 contacts finished', { exact: false }).waitFor();
    await page.getByText(/Live: refreshed every/).waitFor();
    const abandon = page.getByRole('progressbar', { name: /^Last 30 days/ });
    assert.match(
      (await abandon.getAttribute('aria-label')) ?? '',
      /0% abandoned; the governor aims under 3%, 3\.5% pauses the campaign/,
    );
    await page.getByText('Projected completion:').waitFor();

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('paused', { exact: true }).waitFor();
    await page.getByText('Paused by hand.').waitFor();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    const campaignPath = new URL(page.url()).pathname;

    const failures: string[] = [];
    for (const path of ['/campaigns', '/campaigns/new', campaignPath]) {
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
