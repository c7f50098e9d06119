/** The audit log in a real browser: changes listed with who made them, filtered by type and by resource; axe. */
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

test('the audit log lists changes and filters them', { skip: BROWSER_SKIP }, () =>
  scenario(
    'audit-log',
    async ({ page, context, server }) => {
      const user = await registerUser(server);
      const headers = { cookie: `vsid=${user.vsid}`, 'x-requested-with': 'parley-dashboard' };
      const key = await server.t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers,
        payload: { name: 'Nightly export' },
      });
      assert.equal(key.statusCode, 200, key.body);
      const agent = await server.t.app.inject({
        method: 'POST',
        url: '/api/v1/agents',
        headers,
        payload: { name: 'Sales Sally', mission: 'Book a demo' },
      });
      assert.equal(agent.statusCode, 200, agent.body);
      const agentId = (agent.json() as { id: string }).id;
      // The job workers write the log from the domain events: wait until both changes are in it.
      for (let total = 0; total < 2; await new Promise((resolve) => setTimeout(resolve, 200))) {
        const log = await server.t.app.inject({ method: 'GET', url: '/api/v1/audit-events', headers });
        total = (log.json() as { total: number }).total;
      }

      await signInContext(context, server, user.vsid);
      await page.goto('/audit');
      const table = page.getByRole('region', { name: 'Audit events' });
      await table.getByText('api_key.created').waitFor();
      await table.getByText('agent.created').waitFor();
      assert.deepEqual(await accessibilityViolations(page), [], 'the audit log passes axe');

      await page.getByLabel('Event type').selectOption('api_key.created');
      await page.waitForURL(/type=api_key\.created/);
      await page.getByText('1 event', { exact: true }).waitFor();
      assert.equal(await table.getByText('agent.created').count(), 0);

      await page.getByRole('button', { name: 'Clear filters' }).click();
      await page.getByLabel('Resource id').fill(agentId);
      await page.getByRole('button', { name: 'Filter', exact: true }).click();
      await page.waitForURL(new RegExp(`subjectId=${agentId}`));
      await page.getByText('1 event', { exact: true }).waitFor();
      await table.getByText('agent.created').waitFor();

      // A phone's width: still accessible, and nothing wider than the screen.
      await page.setViewportSize({ width: 375, height: 800 });
      assert.deepEqual(await accessibilityViolations(page), [], 'axe passes at 375 px too');
      assert.ok(
        await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
        'the page does not scroll sideways at 375 px',
      );
    },
    { workers: true },
  ),
);
