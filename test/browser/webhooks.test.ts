/**
 * The webhooks settings page in a real browser, with a real local receiver (test/webhook-receiver.ts) verifying each
 * signature: create an endpoint and see its secret once, send a test event and see the delivery and its attempt in
 * the log, rotate the secret; axe on both pages. The receiver listens on 127.0.0.1, which endpoints may target only
 * with WEBHOOK_ALLOW_PRIVATE on; the job workers send the deliveries.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { publishedWebhookBodies, startReceiver } from '../webhook-receiver.js';
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

test('create a webhook, its secret shown once, a test event delivered and logged', { skip: BROWSER_SKIP }, () =>
  scenario(
    'webhooks',
    async ({ page, context, server }) => {
      let secret = '';
      const receiver = await startReceiver({
        secret: () => secret,
        bodies: await publishedWebhookBodies(server.t.app),
      });
      try {
        const user = await registerUser(server);
        await signInContext(context, server, user.vsid);
        await page.goto('/settings/webhooks');
        await page.getByText('No endpoints yet').waitFor();
        assert.deepEqual(await accessibilityViolations(page), [], 'the webhooks page passes axe');

        // The API's field error shows beside the field it names.
        await page.getByLabel('URL').fill('ftp://example.com/hook');
        await page.getByRole('button', { name: 'Add endpoint' }).click();
        await page.locator('[id$="-error"]').first().waitFor();

        const hookUrl = receiver.url;
        await page.getByLabel('URL').fill(hookUrl);
        await page.getByLabel('Description').fill('Order system');
        await page.getByRole('button', { name: 'Add endpoint' }).click();
        const shown = page.getByLabel('Signing secret', { exact: true });
        await shown.waitFor();
        secret = await shown.inputValue();
        assert.match(secret, /^whsec_/, 'the signing secret is shown');
        await page.getByRole('button', { name: 'Copy the signing secret' }).waitFor();
        await page.getByRole('button', { name: 'I have kept it' }).click();
        await page.reload();
        await page.getByRole('link', { name: hookUrl }).waitFor();
        assert.equal(
          await page.getByLabel('Signing secret', { exact: true }).count(),
          0,
          'the secret is not shown again',
        );
        assert.equal((await page.content()).includes(secret), false, 'the secret is nowhere on the page');

        // The endpoint's page: a test event, delivered to the receiver, and its attempt in the log.
        await page.getByRole('link', { name: hookUrl }).click();
        await page.getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
        await page.getByText('Send a test event to see one here.').waitFor();
        await page.getByRole('button', { name: 'Send a test event' }).click();
        const delivery = page.getByRole('button', { name: /^succeeded webhook\.test/ });
        await delivery.waitFor({ timeout: 20_000 });
        assert.equal(receiver.received.length, 1, 'the receiver verified one delivery');
        assert.equal(receiver.received[0]!.body.type, 'webhook.test');
        await delivery.click();
        await page.getByText('HTTP 200').waitFor();
        // Nothing failed since an hour ago, so nothing is sent again.
        await page
          .getByLabel('Failed deliveries since')
          .fill(new Date(Date.now() - 3_600_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16));
        await page.getByRole('button', { name: 'Send them again' }).click();
        await page.getByText('0 deliveries sent again.').waitFor();
        assert.deepEqual(await accessibilityViolations(page), [], 'the endpoint page passes axe');

        // A new secret, shown once too.
        await page.getByRole('button', { name: 'Rotate the secret' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
        const rotated = page.getByLabel('Signing secret', { exact: true });
        await rotated.waitFor();
        // The confirmation closes with a fade: axe reads what is on the page once it is gone.
        await page.getByRole('dialog').waitFor({ state: 'detached' });
        assert.match(await rotated.inputValue(), /^whsec_/);
        assert.notEqual(await rotated.inputValue(), secret);

        // A phone's width: still accessible, and nothing wider than the screen.
        await page.setViewportSize({ width: 375, height: 800 });
        assert.deepEqual(await accessibilityViolations(page), [], 'axe passes at 375 px too');
        assert.ok(
          await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
          'the page does not scroll sideways at 375 px',
        );
      } finally {
        await receiver.close();
      }
    },
    { workers: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } },
  ),
);
