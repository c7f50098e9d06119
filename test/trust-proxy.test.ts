import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../src/config.js';
import { createMemoryCounterStore } from '../src/lib/counter-store.js';
import { buildTestApp, errorBody } from './helpers.js';

const STILL = Date.parse('2026-01-01T00:00:00Z');

/**
 * The anonymous rate limit counts per client IP, so whoever can choose their IP can dodge it. Each spoofed request
 * below claims a new address in X-Forwarded-For; the limit of 3 must still stop the fourth. A fifth request comes
 * from another real client: it has a budget of its own only when the proxy is trusted.
 */
async function statusesThroughProxy(trustProxy: string | undefined) {
  const t = await buildTestApp({
    env: { ANON_RATE_LIMIT_PER_MINUTE: '3', ...(trustProxy ? { TRUST_PROXY: trustProxy } : {}) },
    // Counters whose clock stands still: the window cannot end between the requests, however slow they are.
    counters: createMemoryCounterStore(() => STILL),
  });
  try {
    // The client wrote the first entry; the proxy at 127.0.0.1 appended the address it saw.
    const send = (forwardedFor: string) =>
      t.app.inject({
        method: 'GET',
        url: '/api/v1/public-config',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': forwardedFor },
      });
    const statuses: number[] = [];
    for (let i = 1; i <= 4; i++) statuses.push((await send(`198.51.100.${i}, 203.0.113.7`)).statusCode);
    const refused = await send('198.51.100.9, 203.0.113.7');
    assert.equal(errorBody(refused).error, 'rate_limited');
    statuses.push((await send('203.0.113.8')).statusCode);
    return statuses;
  } finally {
    await t.close();
  }
}

test('a spoofed X-Forwarded-For does not move the client to a fresh rate-limit bucket', async () => {
  assert.deepEqual(await statusesThroughProxy(undefined), [200, 200, 200, 429, 429], 'no proxy trusted');
  assert.deepEqual(await statusesThroughProxy('1'), [200, 200, 200, 429, 200], 'one hop');
  assert.deepEqual(await statusesThroughProxy('127.0.0.0/8, ::1'), [200, 200, 200, 429, 200], 'proxy addresses');
});

test('TRUST_PROXY takes false, a hop count or proxy addresses; "true" is refused with the forms to use', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8,loopback' }).trustProxy, [
    '10.0.0.0/8',
    '127.0.0.1',
    '::1',
    'fd00::/8',
    'loopback',
  ]);
  assert.throws(
    () => loadConfig({ TRUST_PROXY: 'true' }),
    (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /any client could choose its own IP/);
      assert.match(error.message, /TRUST_PROXY=1/);
      assert.match(error.message, /TRUST_PROXY=10\.0\.0\.0\/8,127\.0\.0\.1/);
      return true;
    },
  );
  for (const bad of ['10.0.0.0/33', 'proxy.internal', '10.0.0.1,', '1.2.3']) {
    assert.throws(() => loadConfig({ TRUST_PROXY: bad }), ConfigError, bad);
  }
});
