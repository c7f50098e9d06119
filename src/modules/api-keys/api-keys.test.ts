import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { buildTestApp, call, errorBody, signUp, type TestApp } from '../../../test/helpers.js';
import { createRedisBus } from '../../lib/invalidation-bus.js';
import { apiKeyQueries } from './api-keys.repo.js';
import { API_KEY_REVOKED } from './api-keys.service.js';

let t: TestApp;
before(async () => (t = await buildTestApp()));
after(() => t.close());

test('a created key is va_ + base62, shown once, and authenticates', async () => {
  const owner = await signUp(t.app);
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { cookie: owner.cookie },
    payload: { name: 'CRM sync' },
  });
  assert.equal(created.statusCode, 200);
  const body = created.json();
  assert.match(body.key, /^va_[0-9A-Za-z]{36}$/);
  assert.equal(body.displayPrefix, body.key.slice(0, 9));
  assert.equal(body.lastUsedAt, null);

  const me = await t.app.inject({
    method: 'GET',
    url: '/api/v1/auth/me',
    headers: { authorization: `Bearer ${body.key}` },
  });
  assert.equal(me.statusCode, 200);
  assert.equal(me.json().account.id, owner.accountId);
  assert.equal(me.json().scheme, 'api_key');

  const list = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: owner.headers });
  const listed = list.json().apiKeys.find((k: { id: string }) => k.id === body.id);
  assert.deepEqual(Object.keys(listed).sort(), ['createdAt', 'displayPrefix', 'id', 'lastUsedAt', 'name']);
  assert.equal(listed.name, 'CRM sync');
  assert.ok(listed.lastUsedAt, 'lastUsedAt is recorded once the key is used');
  assert.ok(!JSON.stringify(list.json()).includes(body.key), 'the list never shows a key');
});

test('the database stores only a hash of the key', async () => {
  const owner = await signUp(t.app);
  const rows = await t.infra.database.db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', owner.accountId)
    .execute();
  assert.equal(rows.length, 1);
  assert.notEqual(rows[0]!.key_hash, owner.apiKey);
  assert.ok(!rows[0]!.key_hash.includes(owner.apiKey.slice(3)));
});

test('a deleted key is refused on the very next request', async () => {
  const owner = await signUp(t.app);
  const second = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: owner.headers,
    payload: { name: 'temp' },
  });
  const { id, key } = second.json();
  const headers = { authorization: `Bearer ${key}` };
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers })).statusCode, 200);
  const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: owner.headers });
  assert.equal(deleted.statusCode, 200);
  assert.deepEqual(deleted.json(), { id, deleted: true });
  const refused = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers });
  assert.equal(refused.statusCode, 401);
  assert.equal(errorBody(refused).error, 'unauthorized');
});

test('malformed, mistyped and unknown keys are 401', async () => {
  const owner = await signUp(t.app);
  const flipped = owner.apiKey.slice(0, -1) + (owner.apiKey.endsWith('a') ? 'b' : 'a');
  for (const authorization of ['Bearer nope', `Bearer ${flipped}`, 'Basic abc', `Bearer va_${'x'.repeat(36)}`]) {
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: { authorization } });
    assert.equal(response.statusCode, 401, authorization);
    assert.equal(errorBody(response).error, 'unauthorized');
  }
  const none = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys' });
  assert.equal(none.statusCode, 401);
});

test("another account's key id answers 404 and is not deleted", async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const response = await t.app.inject({
    method: 'DELETE',
    url: `/api/v1/api-keys/${alice.apiKeyId}`,
    headers: bob.headers,
  });
  assert.equal(response.statusCode, 404);
  assert.equal(errorBody(response).error, 'not_found');
  assert.equal(
    (await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: alice.headers })).statusCode,
    200,
  );
  const bobList = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bob.headers });
  assert.deepEqual(
    bobList.json().apiKeys.map((k: { id: string }) => k.id),
    [bob.apiKeyId],
  );
});

test('bad input is a validation error and writes nothing', async () => {
  const owner = await signUp(t.app);
  for (const payload of [{}, { name: '' }, { name: 5 }, { name: 'x', extra: true }]) {
    const response = await t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: owner.headers, payload });
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  const list = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: owner.headers });
  assert.equal(list.json().apiKeys.length, 1);
});

test('a key deleted on one instance is refused at once by another that had just used it', {
  skip: !process.env.DATABASE_URL && 'two instances need PostgreSQL',
}, async () => {
  const prefix = `parley-test:bus:${Date.now()}:`;
  const first = await buildTestApp({ redisKeyPrefix: prefix });
  const second = await buildTestApp({ redisKeyPrefix: prefix, database: first.database });
  try {
    const owner = await signUp(first.app);
    const get = (app: TestApp['app']) => call({ app, headers: owner.headers }, 'GET', '/api-keys');
    assert.equal((await get(second.app)).statusCode, 200);
    assert.equal((await get(second.app)).statusCode, 200, 'served again, from the cache where there is one');
    const deleted = await first.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${owner.apiKeyId}`,
      headers: { cookie: owner.cookie },
    });
    assert.equal(deleted.statusCode, 200);
    // Redis pub/sub delivers asynchronously; allow it a moment, never more than a second.
    let status = 0;
    for (let i = 0; i < 20 && status !== 401; i++) {
      status = (await get(second.app)).statusCode;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(status, 401);
  } finally {
    await second.close();
    await first.close();
  }
});

/** Redis client ids of the connections with this name. */
async function clientIds(redis: Redis, name: string, subscribedOnly = false) {
  const list = (await redis.client('LIST')) as string;
  return list
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=') as [string, string])))
    .filter((client) => client.name === name && (!subscribedOnly || Number(client.sub) > 0))
    .map((client) => client.id!);
}

test('a key deleted while this instance was not listening is refused once it listens again', {
  skip: !process.env.REDIS_URL && 'needs REDIS_URL',
}, async () => {
  const prefix = `parley-test:gap:${randomBytes(6).toString('hex')}:`;
  const first = await buildTestApp({ redisKeyPrefix: prefix });
  const admin = new Redis(process.env.REDIS_URL!);
  const busName = `${prefix}invalidation`;
  const [subscriber, ...extra] = await clientIds(admin, busName, true);
  assert.ok(subscriber && extra.length === 0, 'the bus has one subscribed connection');
  // The other instance: its own Redis connections (its subscriber has the same name), the same database.
  const otherRedis = new Redis(process.env.REDIS_URL!);
  const otherBus = await createRedisBus(otherRedis, prefix);
  const others = (await clientIds(admin, busName, true)).filter((id) => id !== subscriber);
  try {
    const owner = await signUp(first.app);
    const get = () => first.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: owner.headers });
    assert.equal((await get()).statusCode, 200);
    assert.equal((await get()).statusCode, 200, 'served again, from the cache');

    // The other instance deletes the key (its service's two steps: the row, then the message), and the message
    // reaches Redis right after the first instance's subscriber was cut off, well before it can reconnect.
    assert.ok(await apiKeyQueries(first.infra.database.db).delete(owner.accountId, owner.apiKeyId));
    await admin.client('KILL', 'ID', subscriber);
    await otherBus.publish(API_KEY_REVOKED, owner.apiKeyId);

    let resubscribed: string[] = [];
    for (let i = 0; i < 100 && resubscribed.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      resubscribed = (await clientIds(admin, busName, true)).filter((id) => id !== subscriber && !others.includes(id));
    }
    assert.equal(resubscribed.length, 1, 'the bus reconnects and subscribes again');
    const refused = await get();
    assert.equal(refused.statusCode, 401, 'refused after the bus is back');
    assert.equal(errorBody(refused).error, 'unauthorized');

    // Listening again: keys are cached again, and a deletion published now is heard.
    for (let i = 0; i < 100 && !first.infra.bus.reachesAllInstances; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(first.infra.bus.reachesAllInstances, true);
    const created = await first.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { cookie: owner.cookie },
      payload: { name: 'after' },
    });
    const { id, key } = created.json();
    const getWith = () =>
      first.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: { authorization: `Bearer ${key}` } });
    assert.equal((await getWith()).statusCode, 200);
    assert.equal((await getWith()).statusCode, 200);
    assert.ok(await apiKeyQueries(first.infra.database.db).delete(owner.accountId, id));
    await otherBus.publish(API_KEY_REVOKED, id);
    // Redis pub/sub delivers asynchronously; allow it a moment, never more than a second.
    let status = 0;
    for (let i = 0; i < 20 && status !== 401; i++) {
      status = (await getWith()).statusCode;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(status, 401);
  } finally {
    await otherBus.close();
    otherRedis.disconnect();
    admin.disconnect();
    await first.close();
  }
});
