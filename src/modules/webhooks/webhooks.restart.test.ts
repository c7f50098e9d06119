/**
 * A restart loses no delivery: an event committed while no worker ran, a delivery waiting for its retry, and an
 * attempt cut off mid-flight (claimed, never finished) are all delivered by the next process, on PGlite (a data
 * directory) and on PostgreSQL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, signUp } from '../../../test/helpers.js';
import { api, startCallsApp } from '../../../test/calls-kit.js';
import { publishedWebhookBodies, startReceiver } from '../../../test/webhook-receiver.js';
import { inTransaction } from '../../db/repo.js';
import { webhookQueries } from './webhooks.repo.js';

async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, seen?: () => unknown): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await check();
    if (value) return value;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}${seen ? `; last seen: ${JSON.stringify(seen())}` : ''}`);
}

test('a restart in the middle of retries, fan-outs and attempts loses nothing', async () => {
  const database = await createTestDatabase({ from: 'template' });
  const dataDir = database.url ? undefined : await mkdtemp(join(tmpdir(), 'parley-webhooks-'));
  let status = 500;
  let clockNow = () => 0;
  let secret = '';
  let target: Awaited<ReturnType<typeof startReceiver>> | undefined;
  const options = { database, ...(dataDir ? { dataDir } : {}), env: { WEBHOOK_ALLOW_PRIVATE: 'true' } };
  try {
    // The first process: a delivery fails once and waits for its retry; another is claimed and never finished.
    const first = await startCallsApp(options);
    clockNow = () => Math.floor(first.clock.now().getTime() / 1000);
    const bodies = await publishedWebhookBodies(first.t.app);
    target = await startReceiver({ secret: () => secret, status: () => status, nowSec: () => clockNow(), bodies });
    const user = await signUp(first.t.app);
    const { ok } = api(first.t, user);
    const endpoint = await ok('POST', '/webhooks', { url: target.url });
    secret = endpoint.secret;
    const retrying = (await ok('POST', `/webhooks/${endpoint.id}/test`)).deliveryId as string;
    await waitFor(
      'the first attempt',
      async () => (await ok('GET', `/webhooks/${endpoint.id}/deliveries/${retrying}`)).attempts[0]?.finishedAt,
    );
    await first.workers.stop(5_000);

    const cutOff = (await ok('POST', `/webhooks/${endpoint.id}/test`)).deliveryId as string;
    const now = first.clock.now();
    const claimed = await inTransaction(first.t.infra.database.db, (trx) =>
      webhookQueries(trx).claimDue(now, 100, { id: randomUUID(), until: new Date(now.getTime() + 60_000) }),
    );
    assert.deepEqual(
      claimed.map((d) => d.id),
      [cutOff],
      'claimed by a process about to die',
    );

    // An event committed while no worker runs: its delivery waits in the table.
    const campaignId = '00000000-0000-4000-8000-0000000c0ffe';
    await inTransaction(first.t.infra.database.db, (trx) =>
      first.t.services.outbox(trx).emit({
        type: 'campaign.started',
        accountId: user.accountId,
        subject: { type: 'campaign', id: campaignId },
        data: { campaignId, name: 'Q3', agentId: campaignId },
        actor: null,
      }),
    );
    await first.t.services.webhooks.close();
    await first.t.close();

    // The next process, later: the receiver works again.
    status = 200;
    const second = await startCallsApp(options);
    try {
      clockNow = () => Math.floor(second.clock.now().getTime() / 1000);
      second.clock.advance(10 * 60_000);
      await second.t.services.webhooks.dispatchDue();
      const again = api(second.t, { headers: user.headers });
      let lastSeen: unknown;
      const log = await waitFor(
        'every delivery to succeed',
        async () => {
          // Time goes on: the new process's workers start at once, so an attempt may be signed before the jump above
          // and be refused as out of tolerance; its retry must come due.
          second.clock.advance(1_000);
          const { deliveries } = await again.ok('GET', `/webhooks/${endpoint.id}/deliveries?limit=100`);
          lastSeen = deliveries;
          return (
            deliveries.length === 3 && deliveries.every((d: { state: string }) => d.state === 'succeeded') && deliveries
          );
        },
        () => lastSeen,
      );
      const byId = new Map<
        string,
        { eventType: string; attempts: Array<{ statusCode: number | null; error: string | null }> }
      >(log.map((d: { id: string }) => [d.id, d]));
      assert.deepEqual(
        byId.get(retrying)!.attempts.map((a) => a.statusCode),
        [500, 200],
      );
      assert.deepEqual(
        byId.get(cutOff)!.attempts.map((a) => a.statusCode),
        [null, 200],
      );
      assert.match(String(byId.get(cutOff)!.attempts[0]!.error), /interrupted/);
      assert.ok(log.some((d: { eventType: string }) => d.eventType === 'campaign.started'));
      const succeeded = target.received.filter((r) => r.headers['x-service-delivery'] && !r.duplicate);
      assert.equal(new Set(succeeded.map((r) => r.deliveryId)).size, 3);
      await second.t.services.webhooks.close();
    } finally {
      await second.close();
    }
  } finally {
    await target?.close();
    await database.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
});
