/**
 * The request limits: which bucket a request is counted in, each bucket's limit, and the 429 answer. The counters
 * run on a virtual clock, so a window lasts exactly as long as the test says, however slow the machine is; every
 * test starts in fresh windows (the clock moves a minute on before each).
 */
import { test, before, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { asRole, buildTestApp, call, errorBody, signUp, type TestApp } from './helpers.js';
import { generateApiKey } from '../src/modules/api-keys/api-keys.format.js';
import { createVirtualClock } from '../src/lib/clock.js';
import { Redis } from 'ioredis';
import { createMemoryCounterStore, createRedisCounterStore, type CounterStore } from '../src/lib/counter-store.js';

const WINDOW_MS = 60_000;
const clock = createVirtualClock();
// The buckets requests were counted in, latest last (so a test can spend a budget without making every request).
const bucketsHit: string[] = [];
function counters(): CounterStore {
  const store = createMemoryCounterStore(() => clock.now().getTime());
  return {
    ...store,
    hit(key, windowMs) {
      bucketsHit.push(key);
      return store.hit(key, windowMs);
    },
  };
}

// The limits as configured by default, and an app with small ones.
let t: TestApp;
let small: TestApp;
before(async () => {
  t = await buildTestApp({ counters: counters() });
  small = await buildTestApp({
    counters: counters(),
    env: { RATE_LIMIT_PER_MINUTE: '5', ANON_RATE_LIMIT_PER_MINUTE: '5', HEALTH_RATE_LIMIT_PER_MINUTE: '3' },
  });
});
after(async () => {
  await t.close();
  await small.close();
});
beforeEach(() => clock.advance(WINDOW_MS));

const get = (app: TestApp['app'], headers: Record<string, string>) => call({ app, headers }, 'GET', '/api-keys');

/** The statuses of `count` requests made one after another. */
async function statuses(count: number, request: () => Promise<{ statusCode: number }>) {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await request()).statusCode);
  return seen;
}
const times = (count: number, status: number) => Array<number>(count).fill(status);

test('the 301st request within a minute on one API key is refused with the error body and when to retry', async () => {
  const user = await signUp(t.app);
  clock.advance(WINDOW_MS);
  const first = await get(t.app, user.headers);
  assert.equal(first.statusCode, 200);
  assert.equal(first.headers['ratelimit-policy'], '300;w=60');
  assert.equal(first.headers.ratelimit, 'limit=300, remaining=299, reset=60');
  // Requests 2 to 299 of the window, counted straight into the key's bucket: the counting is the same for each.
  const bucket = bucketsHit.at(-1)!;
  for (let i = 2; i <= 299; i++) await t.services.counters.hit(bucket, WINDOW_MS);
  const last = await get(t.app, user.headers);
  assert.equal(last.statusCode, 200, 'request 300');
  assert.equal(last.headers.ratelimit, 'limit=300, remaining=0, reset=60');
  clock.advance(59_000);
  const refused = await get(t.app, user.headers);
  assert.equal(refused.statusCode, 429);
  const body = errorBody(refused);
  assert.equal(body.error, 'rate_limited');
  assert.equal(body.details.retryAfterSec, 1, 'the wait is what is left of the window');
  assert.match(body.message, /wait 1s/);
  assert.equal(refused.headers['retry-after'], '1');
  assert.match(String(refused.headers.ratelimit), /remaining=0/);

  // Another key of the same account has its own budget.
  const otherKey = await signUp(t.app);
  assert.equal((await get(t.app, otherKey.headers)).statusCode, 200);
  // The next window starts the count again.
  clock.advance(1_000);
  assert.equal((await get(t.app, user.headers)).statusCode, 200);
});

test('sessions are counted per user, under the same limit', async () => {
  const owner = await signUp(small.app);
  const member = await asRole(small, owner, 'admin');
  const login = await small.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email: owner.email, password: owner.password },
    remoteAddress: '10.2.0.1',
  });
  assert.equal(login.statusCode, 200, login.body);
  const secondSession = { cookie: `vsid=${login.cookies.find((c) => c.name === 'vsid')!.value}` };
  clock.advance(WINDOW_MS);

  const first = await get(small.app, { cookie: owner.cookie });
  assert.equal(first.headers['ratelimit-policy'], '5;w=60');
  assert.deepEqual(await statuses(5, () => get(small.app, { cookie: owner.cookie })), [...times(4, 200), 429]);
  // The user's other session shares the budget; another user of the same account, and the user's API key, do not.
  assert.equal((await get(small.app, secondSession)).statusCode, 429, "the user's second session");
  assert.deepEqual(await statuses(5, () => get(small.app, member.headers)), times(5, 200), 'another member');
  assert.equal((await get(small.app, member.headers)).statusCode, 429);
  assert.equal((await get(small.app, owner.headers)).statusCode, 200, "the user's API key");
  clock.advance(WINDOW_MS);
  assert.equal((await get(small.app, { cookie: owner.cookie })).statusCode, 200, 'a new window');
});

test('anonymous requests are counted per IP under their own limit', async () => {
  const publicConfig = (remoteAddress: string) =>
    small.app.inject({ method: 'GET', url: '/api/v1/public-config', remoteAddress });
  assert.deepEqual(await statuses(6, () => publicConfig('10.1.1.1')), [...times(5, 200), 429]);
  const refused = await publicConfig('10.1.1.1');
  assert.equal(errorBody(refused).error, 'rate_limited');
  assert.equal((await publicConfig('10.1.1.2')).statusCode, 200);
});

test('failed authentications count in the per-IP budget: past it, forged keys and cookies get 429', async () => {
  const user = await signUp(small.app);
  clock.advance(WINDOW_MS);
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
  const seen: number[] = [];
  for (let i = 0; i < 20; i++) {
    const headers = i % 2 ? { authorization: `Bearer ${generateApiKey()}` } : { cookie: `vsid=${'C'.repeat(32)}` };
    const response = await small.app.inject({
      method: 'GET',
      url: '/api/v1/api-keys',
      headers,
      remoteAddress: attacker,
    });
    seen.push(response.statusCode);
    if (i === 0) {
      const body = errorBody(response);
      assert.equal(body.error, 'rate_limited');
      const wait = body.details.retryAfterSec as number;
      assert.equal(wait, 60);
      assert.equal(response.headers['retry-after'], String(wait));
    }
  }
  assert.deepEqual(seen, times(20, 429), 'every further attempt is refused');
  // Until the window resets the address is refused before any lookup, whatever it sends; public routes too.
  const asUser = (remoteAddress: string) =>
    small.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: user.headers, remoteAddress });
  assert.equal((await asUser(attacker)).statusCode, 429);
  assert.equal(
    (await small.app.inject({ method: 'GET', url: '/api/v1/public-config', remoteAddress: attacker })).statusCode,
    429,
  );
  // Other addresses are not affected, and valid credentials are never counted in the per-IP budget: two users'
  // keys make more requests from one address than its anonymous budget, and leave that budget whole.
  assert.equal((await asUser('10.3.0.2')).statusCode, 200);
  const colleague = await signUp(small.app);
  clock.advance(WINDOW_MS);
  for (const who of [user, colleague]) {
    const fromOneAddress = () =>
      small.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: who.headers, remoteAddress: '10.3.0.3' });
    assert.deepEqual(await statuses(5, fromOneAddress), times(5, 200));
  }
  const anonymous = await small.app.inject({ method: 'GET', url: '/api/v1/public-config', remoteAddress: '10.3.0.3' });
  assert.equal(anonymous.statusCode, 200);
  assert.match(String(anonymous.headers.ratelimit), /remaining=4,/);
});

test('a stale cookie on a public route counts once, as the anonymous request it becomes', async () => {
  const seen = await statuses(6, () =>
    small.app.inject({
      method: 'GET',
      url: '/api/v1/public-config',
      headers: { cookie: `vsid=${'D'.repeat(32)}` },
      remoteAddress: '10.4.0.1',
    }),
  );
  assert.deepEqual(seen, [...times(5, 200), 429]);
});

test('/api/health has a per-IP limit of its own', async () => {
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
});

test('the limit can be raised per account', async () => {
  const raised = await signUp(small.app);
  const other = await signUp(small.app);
  await small.infra.database.db
    .updateTable('accounts')
    .set({ rate_limit_per_minute: 8 })
    .where('id', '=', raised.accountId)
    .execute();
  clock.advance(WINDOW_MS);
  const first = await get(small.app, raised.headers);
  assert.equal(first.headers['ratelimit-policy'], '8;w=60');
  assert.deepEqual(await statuses(8, () => get(small.app, raised.headers)), [...times(7, 200), 429], 'its API key');
  assert.deepEqual(
    await statuses(9, () => get(small.app, { cookie: raised.cookie })),
    [...times(8, 200), 429],
    "its users' sessions",
  );
  // Other accounts keep the default.
  assert.deepEqual(await statuses(6, () => get(small.app, other.headers)), [...times(5, 200), 429]);
});

// Two instances share one database only on PostgreSQL: embedded PGlite belongs to one process.
const TWO_INSTANCES = process.env.REDIS_URL && process.env.DATABASE_URL;
test('with Redis, two instances share one budget', {
  skip: !TWO_INSTANCES && 'needs REDIS_URL and DATABASE_URL',
}, async () => {
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

test('with Redis, a budgeted key takes its hits in small leases, and two instances still share one budget', {
  skip: !process.env.REDIS_URL && 'needs REDIS_URL',
}, async () => {
  const prefix = `parley-test:lease:${randomBytes(6).toString('hex')}:`;
  const clients = [new Redis(process.env.REDIS_URL!), new Redis(process.env.REDIS_URL!)];
  let roundTrips = 0;
  for (const client of clients) {
    const send = client.sendCommand.bind(client);
    // Counted: the scripts that count (a script loaded on first use is sent twice, evalsha then eval).
    client.sendCommand = ((command: Parameters<typeof send>[0]) => {
      if (command.name === 'evalsha') roundTrips++;
      return send(command);
    }) as typeof send;
  }
  const [a, b] = clients.map((client) => createRedisCounterStore(client, prefix)) as [CounterStore, CounterStore];
  try {
    // One instance: 300 hits of a 300 budget, then the 301st is over it; the count is exact at the end.
    const counts: number[] = [];
    for (let i = 0; i < 301; i++) counts.push((await a.hit('rl:key:one', WINDOW_MS, 300)).count);
    assert.deepEqual(
      counts.slice(0, 300),
      Array.from({ length: 300 }, (_, i) => i + 1),
      'every hit counted once',
    );
    assert.equal(counts[300], 301, 'the 301st is over the budget');
    // Leases of 8 while much is left, shrinking to single hits over the last 16: 79 round trips.
    assert.ok(roundTrips <= 80, `${roundTrips} round trips for 301 hits`);
    assert.equal(Number(await clients[0]!.get(`${prefix}rl:key:one`)), 301);

    // A budget far from its end (a raised limit): one round trip per 8 hits.
    const atStart = roundTrips;
    for (let i = 0; i < 800; i++) await a.hit('rl:key:raised', WINDOW_MS, 100_000);
    assert.equal(roundTrips - atStart, 100);

    // Hits arriving together wait for the lease being taken instead of each taking one: 50 hits, 7 round trips.
    const together = roundTrips;
    const concurrent = await Promise.all(
      Array.from({ length: 50 }, () => a.hit('rl:key:together', WINDOW_MS, 100_000)),
    );
    assert.deepEqual(
      concurrent.map((hit) => hit.count).sort((x, y) => x - y),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    assert.equal(roundTrips - together, 7);

    // Two instances taking turns: together they are let through no more than the budget, and at most 7 each fewer.
    let allowed = 0;
    for (let i = 0; i < 320; i++) if ((await (i % 2 ? b : a).hit('rl:key:two', WINDOW_MS, 300)).count <= 300) allowed++;
    assert.ok(allowed <= 300 && allowed >= 300 - 14, `${allowed} of 320 let through`);

    // Unbudgeted hits (login throttling, anonymous addresses) are counted one by one.
    const before = roundTrips;
    for (let i = 0; i < 5; i++) await a.hit('rl:ip:x', WINDOW_MS);
    assert.equal(roundTrips - before, 5);
  } finally {
    await a.close();
    await b.close();
  }
});
