/**
 * Talking to an agent in text in a real browser: the answer streamed through the LLM proxy with the knowledge it was
 * given, the assembled prompt and the safety findings beside it; axe.
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

test('talk to an agent: answers, the knowledge used, prompt and findings', { skip: BROWSER_SKIP }, () =>
  scenario('chat', async ({ page, context, server }) => {
    const user = await registerUser(server);
    const agent = await server.t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: { cookie: `vsid=${user.vsid}`, 'x-requested-with': 'parley-dashboard' },
      payload: {
        name: 'Sales Sally',
        mission: 'Book a demo of the Acme scheduler',
        status: 'active',
        voice: 'en-us',
        knowledgeBase: [
          '# Warranty',
          'Every Acme scheduler carries a seventeen-year warranty underwritten by Zephyr Mutual.',
          '',
          '# Office',
          'Our office is in Lisbon, open Monday to Friday.',
        ].join('\n'),
      },
    });
    assert.equal(agent.statusCode, 200, agent.body);
    // Indexed now rather than by the background worker a moment later.
    await server.t.services.knowledge.reindex(user.accountId, agent.json().id);

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
    // Nothing in the knowledge base matches a greeting, and the turn says so.
    await log.getByRole('button', { name: 'Knowledge used: none' }).click();
    await log.getByText('No passage of the agent').waitFor();

    await page.getByLabel('Your message').fill('How long is the warranty?');
    await page.keyboard.press('Enter');
    const used = log.getByRole('button', { name: 'Knowledge used: 1 passage' });
    await used.waitFor({ timeout: 20_000 });
    await used.click();
    const passages = log.getByRole('list', { name: 'Knowledge used for this answer' });
    await passages.getByText('seventeen-year warranty underwritten by Zephyr Mutual').waitFor();
    await passages.getByText('Warranty', { exact: true }).waitFor();
    assert.equal(await passages.getByText('Lisbon').count(), 0, 'only the passage that matched');

    await page.getByText('Safety findings').waitFor();
    await page.getByRole('button', { name: 'Knowledge base' }).click();
    await page.getByText('2 passages indexed').waitFor();
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
