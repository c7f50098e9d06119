/**
 * The dashboard's main path in a real browser, on the simulated phone network with the job workers running: create
 * an agent from a template, activate it, press test call, watch the transcript grow turn by turn and the call end,
 * then play the recording (its time advances) and click a transcript line to seek there.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSER_SKIP, closeBrowser, ensureDashboardBuilt, registerUser, scenario, signInContext } from './kit.js';

before(() => {
  if (!BROWSER_SKIP) ensureDashboardBuilt();
});
after(() => closeBrowser());

test('template agent, test call, live transcript, recording with click-to-seek', { skip: BROWSER_SKIP }, () =>
  scenario(
    'test-call',
    async ({ page, context, server }) => {
      const user = await registerUser(server);
      await signInContext(context, server, user.vsid);

      // An agent from a template: its blanks are a form.
      await page.goto('/agents/new');
      await page.getByRole('radio', { name: /Appointment setter/ }).check();
      const form = page.getByRole('form', { name: /Create from Appointment setter/ });
      for (const input of await form.locator('input[required]').all()) await input.fill('Acme Solar');
      await form.getByRole('button', { name: 'Create agent' }).click();
      await page.getByRole('tab', { name: 'Soul' }).waitFor();

      // Activate it in the settings, and save.
      await page.getByRole('tab', { name: 'Settings' }).click();
      await page.getByRole('combobox', { name: 'Status' }).click();
      await page.getByRole('option', { name: 'active' }).click();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText(/Saved: version/).waitFor();

      // The test call: buy a number to call from, then call someone who answers (last digit 0) and asks to be
      // called back (second-to-last digit 2): a short conversation.
      await page.getByRole('main').getByRole('link', { name: 'Test call' }).click();
      await page.getByRole('button', { name: 'Buy a US number' }).click();
      await page.getByRole('combobox', { name: 'Call from' }).waitFor();
      await page.getByLabel('Number to call').fill('+14155550120');
      await page.getByRole('button', { name: 'Call', exact: true }).click();
      await page.waitForURL(/\/calls\/[0-9a-f-]{36}$/);
      await page.getByRole('heading', { name: 'Live transcript' }).waitFor({ timeout: 30_000 });

      // The transcript grows while the call runs, one turn after another, then the call ends.
      const lines = page.getByRole('list', { name: 'Transcript' }).locator('li[data-seq]');
      const counts: number[] = [];
      const started = Date.now();
      while (Date.now() - started < 120_000) {
        const heading = await page.getByRole('heading', { name: 'Recording and transcript' }).count();
        counts.push(await lines.count());
        if (heading > 0) break;
        await page.waitForTimeout(250);
      }
      const growth = [...new Set(counts)].filter((count) => count > 0);
      assert.ok(growth.length >= 2, `the transcript was seen growing: ${JSON.stringify(growth)}`);
      await page.getByText('completed', { exact: true }).first().waitFor();

      // The recording plays: the audio element's time advances.
      const audio = page.getByLabel('Call recording');
      await audio.waitFor();
      await page.waitForFunction(() => {
        const element = document.querySelector('audio');
        return element !== null && element.readyState >= 1 && Number.isFinite(element.duration) && element.duration > 0;
      });
      await audio.evaluate((element: HTMLAudioElement) => element.play());
      await page.waitForFunction(() => (document.querySelector('audio')?.currentTime ?? 0) > 0.3);
      await audio.evaluate((element: HTMLAudioElement) => element.pause());

      // A transcript line seeks there, and is then the line marked as spoken.
      const seekable = page.getByRole('button', { name: /^Play from / });
      const target = seekable.nth((await seekable.count()) - 1);
      const label = (await target.textContent()) ?? '';
      const [, minutes, seconds] = /Play from\s*(\d+):(\d\d)/.exec(label) ?? [];
      assert.ok(minutes !== undefined && seconds !== undefined, label);
      await target.click();
      const at = await audio.evaluate((element: HTMLAudioElement) => element.currentTime);
      const expected = Number(minutes) * 60 + Number(seconds);
      assert.ok(Math.abs(at - expected) <= 1, `seeked to ${at} s, the line starts at ${expected} s`);
      await page.locator('li[aria-current="true"]').waitFor();

      // The costs add up to the total, item by item.
      await page.getByRole('heading', { name: 'Costs' }).waitFor();
      assert.ok(
        (await page.getByRole('rowheader', { name: 'Total' }).count()) +
          (await page.getByText('Total', { exact: true }).count()) >
          0,
      );
    },
    { workers: true },
  ),
);
