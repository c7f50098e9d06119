/**
 * Talking to an agent in text in a real browser: the answer streamed through the LLM proxy, the assembled prompt and
 * the safety findings beside it; axe.
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

test('talk to an agent: an answer, the prompt and the safety findings', { skip: BROWSER_SKIP }, () =>
  scenario('chat', async ({ page, context, server }) => {
    const user = await registerUser(server);
    const agent = await server.t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: { cookie: `vsid=${user.vsid}`, 'x-requested-with': 'parley-dashboard' },
      payload: { name: 'Sales Sally', mission: 'Book a demo of the Acme scheduler', status: 'active' },
    });
    assert.equal(agent.statusCode, 200, agent.body);

    await signInContext(context, server, user.vsid);
    await page.goto('/chat');
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Sales Sally (active)' });
    await page.getByText('Say something to the agent').waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'the chat page passes axe');

    await page.getByLabel('Your message').fill('Hello, who is this?');
    await page.keyboard.press('Enter');
    const log = page.getByRole('log', { name: 'Conversation' });
    await log.getByText('Hello, who is this?').waitFor();
    await log.getByText(/answer tokens$/).waitFor({ timeout: 20_000 });
    const answer = await log.locator('p').nth(3).textContent();
    assert.ok(answer && answer.length > 0 && answer !== '…', `the agent answered: ${answer}`);

    await page.getByText('Safety findings').waitFor();
    await page.getByRole('button', { name: 'The assembled prompt' }).click();
    await page.getByLabel('Assembled prompt').getByText('Book a demo of the Acme scheduler').waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'the chat page with a conversation passes axe');

    // A phone's width: still accessible, and nothing wider than the screen.
    await page.setViewportSize({ width: 375, height: 800 });
    assert.deepEqual(await accessibilityViolations(page), [], 'axe passes at 375 px too');
    assert.ok(
      await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      'the page does not scroll sideways at 375 px',
    );
  }),
);
