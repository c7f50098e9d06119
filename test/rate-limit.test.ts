import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { buildTestApp, call, errorBody, signUp, type TestApp } from './helpers.js';
import { generateApiKey } from '../src/modules/api-keys/api-key-format.js';

let t: TestApp;
before(async () => (t = await buildTestApp()));
after(() => t.close());

const get = (app: TestApp['app'], headers: Record<string, string>) => call({ app, headers }, 'GET', '/api-keys');

test('the 301st request within a minute on one API key is refused with the spec body', async () => {
  const user = await signUp(t.app);
  for (let i = 1; i <= 300; i++) {
    const response = await get(t.app, user.headers);
    assert.equal(response.statusCode, 200, `request ${i}`);
    if (i === 1) {
      assert.equal(response.headers['ratelimit-policy'], '300;w=60');
      assert.match(String(response.headers['ratelimit']), /^limit=300, remaining=299, reset=\d+$/);
    }
  }
  const refused = await get(t.app, user.headers);
  assert.equal(refused.statusCode, 429);
  const body = errorBody(refused);
  assert.equal(body.error, 'rate_limited');
  const wait = body.details.retryAfterSec as number;
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60);
  assert.match(body.message, new RegExp(`wait ${wait}s`));
  assert.equal(refused.headers['retry-after'], String(wait));
  assert.match(String(refused.headers['ratelimit']), /remaining=0/);

  // Another key of the same account has its own budget.
  const otherKey = await signUp(t.app);
  assert.equal((await get(t.app, otherKey.headers)).statusCode, 200);
});

test('sessions are counted per user, under the same limit', async () => {
  const user = await signUp(t.app);
  const response = await get(t.app, { cookie: user.cookie });
  assert.equal(response.headers['ratelimit-policy'], '300;w=60');
});

test('anonymous requests are counted per IP under their own limit', async () => {
  const small = await buildTestApp({ env: { ANON_RATE_LIMIT_PER_MINUTE: '5' } });
  try {
    for (let i = 0; i < 5; i++) {
      assert.equal(
        (await small.app.inject({ method: 'GET', url: '/api/v1/public-config', remoteAddress: '10.1.1.1' })).statusCode,
        200,
      );
    }
    const refused = await small.app.inject({ method: 'GET', url: '/api/v1/public-config', remoteAddress: '10.1.1.1' });
    assert.equal(refused.statusCode, 429);
    assert.equal(errorBody(refused).error, 'rate_limited');
    const otherIp = await small.app.inject({ method: 'GET', url: '/api/v1/public-config', remoteAddress: '10.1.1.2' });
    assert.equal(otherIp.statusCode, 200);
  } finally {
    await small.close();
  }
});

test('failed authentications count in the per-IP budget: past it, forged keys and cookies get 429', async () => {
  const small = await buildTestApp({ env: { ANON_RATE_LIMIT_PER_MINUTE: '5' } });
  try {
    const user = await signUp(small.app);
    const attacker = '10.3.0.1';
    const forged = [
      { authorization: `Bearer ${generateApiKey()}` }, // well-formed, so it costs a lookup
      { authorization: `Bearer ${generateApiKey()}` },
      { cookie: `vsid=${'A'.repeat(32)}` },
      { cookie: `vsid=${'B'.repeat(32)}` },
      {}, // no credentials at all on a private route
    ];
    for (const headers of forged) {
      const response = await small.app.inject({
        method: 'GET',
        url: '/api/v1/api-keys',
        headers,
        remoteAddress: attacker,
      });
      assert.equal(response.statusCode, 401, JSON.stringify(headers));
      assert.equal(response.headers['ratelimit-policy'], '5;w=60');
    }
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const headers = i % 2 ? { authorization: `Bearer ${generateApiKey()}` } : { cookie: `vsid=${'C'.repeat(32)}` };
      const response = await small.app.inject({
        method: 'GET',
        url: '/api/v1/api-keys',
        headers,
        remoteAddress: attacker,
      });
      statuses.push(response.statusCode);
      if (i === 0) {
        const body = errorBody(response);
        assert.equal(body.error, 'rate_limited');
        const wait = body.details.retryAfterSec as number;
        assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60);
        assert.equal(response.headers['retry-after'], String(wait));
      }
    }
    assert.deepEqual(new Set(statuses), new Set([429]), 'every further attempt is refused');
    // Until the window resets the address is refused before any lookup, whatever it sends; public routes too.
    assert.equal(
      (
        await small.app.inject({
          method: 'GET',
          url: '/api/v1/api-keys',
          headers: user.headers,
          remoteAddress: attacker,
        })
      ).statusCode,
      429,
    );
    assert.equal(
      (await small.app.inject({ method: 'GET', url: '/api/v1/public-config', remoteAddress: attacker })).statusCode,
      429,
    );
    // Other addresses are not affected, and valid credentials are never counted in the per-IP budget.
    assert.equal(
      (
        await small.app.inject({
          method: 'GET',
          url: '/api/v1/api-keys',
          headers: user.headers,
          remoteAddress: '10.3.0.2',
        })
      ).statusCode,
      200,
    );
    for (let i = 0; i < 8; i++) {
      assert.equal(
        (
          await small.app.inject({
            method: 'GET',
            url: '/api/v1/api-keys',
            headers: user.headers,
            remoteAddress: '10.3.0.3',
          })
        ).statusCode,
        200,
      );
    }
  } finally {
    await small.close();
  }
});

test('a stale cookie on a public route counts once, as the anonymous request it becomes', async () => {
  const small = await buildTestApp({ env: { ANON_RATE_LIMIT_PER_MINUTE: '4' } });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await small.app.inject({
        method: 'GET',
        url: '/api/v1/public-config',
        headers: { cookie: `vsid=${'D'.repeat(32)}` },
        remoteAddress: '10.4.0.1',
      });
      statuses.push(response.statusCode);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
  } finally {
    await small.close();
  }
});

test('/api/health has a per-IP limit of its own', async () => {
  const small = await buildTestApp({ env: { HEALTH_RATE_LIMIT_PER_MINUTE: '3', ANON_RATE_LIMIT_PER_MINUTE: '5' } });
  try {
    const health = (remoteAddress: string) => small.app.inject({ method: 'GET', url: '/api/health', remoteAddress });
    for (let i = 0; i < 3; i++) {
      const response = await health('10.5.0.1');
      assert.equal(response.statusCode, 200, `check ${i + 1}`);
      assert.equal(response.headers['ratelimit-policy'], '3;w=60');
    }
    const refused = await health('10.5.0.1');
    assert.equal(refused.statusCode, 429);
    const body = errorBody(refused);
    assert.equal(body.error, 'rate_limited');
    assert.equal(refused.headers['retry-after'], String(body.details.retryAfterSec));
    assert.equal((await health('10.5.0.2')).statusCode, 200, 'another address has its own budget');
    // The health budget and the anonymous API budget are separate.
    const api = await small.app.inject({ method: 'GET', url: '/api/v1/public-config', remoteAddress: '10.5.0.1' });
    assert.equal(api.statusCode, 200);
    assert.equal(api.headers['ratelimit-policy'], '5;w=60');
  } finally {
    await small.close();
  }
});

test('the limit can be raised per account', async () => {
  const user = await signUp(t.app);
  await t.infra.database.db
    .updateTable('accounts')
    .set({ rate_limit_per_minute: 1000 })
    .where('id', '=', user.accountId)
    .execute();
  const response = await get(t.app, user.headers);
  assert.equal(response.headers['ratelimit-policy'], '1000;w=60');
});

test('with Redis, two instances share one budget', { skip: !process.env.REDIS_URL && 'needs REDIS_URL' }, async () => {
  const prefix = `parley-test:shared:${randomBytes(6).toString('hex')}:`;
  const env = { RATE_LIMIT_PER_MINUTE: '10' };
  const first = await buildTestApp({ env, redisKeyPrefix: prefix });
  const second = await buildTestApp({ env, redisKeyPrefix: prefix, database: first.database });
  try {
    const user = await signUp(first.app);
    // signUp works through the session, so the key starts fresh: spend its 10 across both instances.
    for (let i = 0; i < 5; i++) assert.equal((await get(first.app, user.headers)).statusCode, 200);
    for (let i = 0; i < 5; i++) assert.equal((await get(second.app, user.headers)).statusCode, 200);
    assert.equal((await get(second.app, user.headers)).statusCode, 429);
    assert.equal((await get(first.app, user.headers)).statusCode, 429);
  } finally {
    await second.close();
    await first.close();
  }
});
