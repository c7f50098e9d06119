import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { ConfigError, loadConfig } from '../../config.js';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let ticks = 0;
/** Moves the app's clock forward, for monthly renewals. */
let shiftMs = 0;
before(async () => (t = await buildTestApp({ clock: { now: () => new Date(Date.now() + shiftMs + ticks++) } })));
after(() => t.close());

const DAY_MS = 86_400_000;
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (who: SignedUp, method: Method, url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
async function ok(who: SignedUp, method: Method, url: string, payload?: unknown) {
  const response = await call(who, method, url, payload);
  assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
  return response.json();
}
const search = (who: SignedUp, query: string) => call(who, 'GET', `/phone-numbers/inventory/search?${query}`);
const numbersOf = (page: { availableNumbers: Array<{ number: string }> }) => page.availableNumbers.map((n) => n.number);
const charges = (accountId: string) =>
  t.infra.database.db
    .selectFrom('number_charges')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('period_start')
    .execute();

test('a search offers valid numbers of the area code from the fictional 555-01xx range, always in the same order', async () => {
  const user = await signUp(t.app);
  const first = (await search(user, 'country=US&areaCode=415')).json();
  assert.equal(first.total, 100);
  assert.equal(first.availableNumbers.length, 25);
  assert.deepEqual(first.availableNumbers[0], {
    number: '+14155550100',
    country: 'US',
    areaCode: '415',
    capabilities: ['voice', 'sms'],
    monthlyFeeUsd: '1.15',
  });
  const all = numbersOf((await search(user, 'country=us&areaCode=415&limit=500')).json());
  assert.equal(all.length, 100);
  for (const number of all) {
    assert.match(number, /^\+141555501\d\d$/);
    const parsed = parsePhoneNumberFromString(number)!;
    assert.ok(parsed.isValid() && parsed.country === 'US', number);
  }
  assert.deepEqual(
    numbersOf((await search(user, 'country=US&areaCode=415&limit=10&offset=25')).json()),
    all.slice(25, 35),
  );
  assert.deepEqual(
    numbersOf((await search(user, 'country=US&areaCode=415')).json()),
    all.slice(0, 25),
    'the same search, the same numbers',
  );
  assert.deepEqual(numbersOf((await search(user, 'country=US&areaCode=212&limit=2')).json()), [
    '+12125550100',
    '+12125550101',
  ]);

  const toronto = (await search(user, 'country=CA&areaCode=416&limit=1')).json();
  assert.deepEqual(
    [toronto.availableNumbers[0].number, toronto.availableNumbers[0].country, toronto.total],
    ['+14165550100', 'CA', 100],
  );

  const london = (await search(user, 'country=GB&areaCode=20&limit=500')).json();
  assert.equal(london.total, 1000);
  assert.deepEqual(
    london.availableNumbers.slice(0, 2).map((n: object) => n),
    [
      { number: '+442079460000', country: 'GB', areaCode: '20', capabilities: ['voice'], monthlyFeeUsd: '1.50' },
      { number: '+442079460001', country: 'GB', areaCode: '20', capabilities: ['voice'], monthlyFeeUsd: '1.50' },
    ],
  );
  for (const { number } of london.availableNumbers) assert.ok(parsePhoneNumberFromString(number)!.isValid(), number);
  assert.equal(
    (await search(user, 'country=GB&areaCode=161&limit=1')).json().availableNumbers[0].number,
    '+441614960000',
  );
});

test('an unknown area code or country, or a malformed query, is a 400 naming the parameter', async () => {
  const user = await signUp(t.app);
  const refused: Array<[string, string, RegExp]> = [
    ['country=US&areaCode=999', 'querystring/areaCode', /999 is not a local area code .* for US/],
    ['country=US&areaCode=555', 'querystring/areaCode', /555 is not a local area code/],
    ['country=US&areaCode=800', 'querystring/areaCode', /800 is not a local area code/],
    ['country=US&areaCode=41', 'querystring/areaCode', /41 is not a local area code/],
    ['country=CA&areaCode=415', 'querystring/areaCode', /415 is not a local area code .* for CA/],
    ['country=GB&areaCode=1632', 'querystring/areaCode', /it has 20, 28, 29, 113/],
    ['country=ZZ&areaCode=415', 'querystring/country', /ZZ is not a country with phone numbers/],
    ['country=DE&areaCode=30', 'querystring/country', /not in DE/],
    ['country=USA&areaCode=415', 'querystring/country', /must match pattern/],
    ['country=US&areaCode=4a5', 'querystring/areaCode', /must match pattern/],
    ['country=US&areaCode=%00415', 'querystring/areaCode', /NUL characters/],
    ['country=US', 'querystring/areaCode', /required/],
    ['areaCode=415', 'querystring/country', /required/],
    ['country=US&areaCode=415&limit=0', 'querystring/limit', /must be >= 1/],
    ['country=US&areaCode=415&region=x', 'querystring/region', /not a known field/],
  ];
  for (const [query, field, message] of refused) {
    const response = await search(user, query);
    assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
    const body = errorBody(response);
    assert.equal(body.error, 'validation_failed');
    const problem = (body.details.fields as Array<{ field: string; message: string }>)[0]!;
    assert.equal(problem.field, field, query);
    assert.match(problem.message, message, query);
  }
});

test('buying a number from a search: listed as purchased, gone from every search, its first month charged', async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const offered = (await search(alice, 'country=US&areaCode=646&limit=3')).json().availableNumbers[2].number;
  assert.equal(offered, '+16465550102');
  const bought = await ok(alice, 'POST', '/phone-numbers/inventory/purchase', { number: offered });
  assert.deepEqual(
    { ...bought, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      id: undefined,
      number: '+16465550102',
      country: 'US',
      areaCode: '646',
      capabilities: ['voice', 'sms'],
      agentId: null,
      source: 'purchased',
      monthlyFeeUsd: '1.15',
      reputation: null,
      createdAt: undefined,
      updatedAt: undefined,
    },
  );
  for (const who of [alice, bob]) {
    const after = (await search(who, 'country=US&areaCode=646&limit=500')).json();
    assert.equal(after.total, 99);
    assert.ok(!numbersOf(after).includes(offered));
  }
  const again = await call(bob, 'POST', '/phone-numbers/inventory/purchase', { number: '(646) 555-0102' });
  assert.equal(again.statusCode, 409);
  assert.deepEqual(errorBody(again), {
    error: 'conflict',
    message: '+16465550102 is no longer available',
    details: { number: '+16465550102' },
  });
  assert.equal(
    (await call(bob, 'POST', '/phone-numbers', { number: offered })).statusCode,
    409,
    'nor can it be brought',
  );

  const [charge] = await charges(alice.accountId);
  assert.equal(charge!.phone_number_id, bought.id);
  assert.equal(charge!.number, '+16465550102');
  assert.equal(charge!.amount_usd, '1.15');
  assert.equal(charge!.period_start.toISOString(), bought.createdAt);
  const periodDays = (charge!.period_end.getTime() - charge!.period_start.getTime()) / DAY_MS;
  assert.ok(periodDays >= 28 && periodDays <= 31, `one month: ${periodDays} days`);
  assert.deepEqual(await charges(bob.accountId), []);
  const events = await t.infra.database.db
    .selectFrom('domain_events')
    .select(['type', 'data'])
    .where('account_id', '=', alice.accountId)
    .where('type', 'in', ['phone_number.added', 'phone_number.purchased'])
    .execute();
  assert.deepEqual(events, [
    { type: 'phone_number.purchased', data: { number: '+16465550102', carrier: 'sim', monthlyFeeUsd: '1.15' } },
  ]);
});

test('buying by country and area code takes the first free number; an exhausted area code is a 409', async () => {
  const user = await signUp(t.app);
  const other = await signUp(t.app);
  await ok(other, 'POST', '/phone-numbers/inventory/purchase', { number: '+13125550100' });
  const first = await ok(user, 'POST', '/phone-numbers/inventory/purchase', { country: 'us', areaCode: '312' });
  assert.equal(first.number, '+13125550101', 'the first number not taken');
  const london = await ok(user, 'POST', '/phone-numbers/inventory/purchase', { country: 'GB', areaCode: '20' });
  assert.deepEqual([london.number, london.monthlyFeeUsd, london.capabilities], ['+442079460000', '1.50', ['voice']]);

  for (let i = 0; i < 98; i++)
    await ok(user, 'POST', '/phone-numbers/inventory/purchase', { country: 'US', areaCode: '312' });
  assert.equal((await search(user, 'country=US&areaCode=312')).json().total, 0);
  const none = await call(user, 'POST', '/phone-numbers/inventory/purchase', { country: 'US', areaCode: '312' });
  assert.equal(none.statusCode, 409);
  assert.equal(errorBody(none).message, 'No free numbers left in area code 312 (US)');
  assert.equal((await ok(user, 'GET', '/phone-numbers')).total, 100);
  assert.equal((await charges(user.accountId)).length, 100);
});

test('bad purchases are a 400 and buy nothing', async () => {
  const user = await signUp(t.app);
  const refused: Array<[unknown, string]> = [
    [{}, 'body'],
    [{ country: 'US' }, 'body'],
    [{ areaCode: '415' }, 'body'],
    [{ number: '+14155550100', country: 'US', areaCode: '415' }, 'body'],
    [{ number: '+14155552671' }, 'body/number'],
    [{ number: '+4930123456' }, 'body/number'],
    [{ number: '+1415' }, 'body/number'],
    [{ number: '+1415555\u00000100' }, 'body/number'],
    [{ country: 'US', areaCode: '999' }, 'body/areaCode'],
    [{ country: 'FR', areaCode: '1' }, 'body/country'],
    [{ country: 'US', areaCode: 415 }, 'body/areaCode'],
    [{ number: '+14155550100', agentId: null }, 'body/agentId'],
  ];
  for (const [payload, field] of refused) {
    const response = await call(user, 'POST', '/phone-numbers/inventory/purchase', payload);
    assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
    const body = errorBody(response);
    assert.equal((body.details.fields as Array<{ field: string }>)[0]!.field, field, JSON.stringify(body));
  }
  assert.equal((await ok(user, 'GET', '/phone-numbers')).total, 0);
  assert.deepEqual(await charges(user.accountId), []);
});

test('a bought number is charged again each month by the renewal job, a brought one never', async () => {
  const user = await signUp(t.app);
  const bought = await ok(user, 'POST', '/phone-numbers/inventory/purchase', { country: 'US', areaCode: '617' });
  await ok(user, 'POST', '/phone-numbers', { number: '+16175552671' });
  // The job renews every account's numbers (other tests' too): count this account's charges.
  const renew = async () => {
    await t.services.numbers.renewMonthlyFees();
    return (await charges(user.accountId)).length;
  };
  assert.equal(await renew(), 1, 'the first month is paid');

  shiftMs = 32 * DAY_MS;
  try {
    assert.equal(await renew(), 2);
    assert.equal(await renew(), 2, 'a second run charges nothing more');
    shiftMs = 4 * 31 * DAY_MS;
    assert.equal(await renew(), 5, 'missed months are caught up');
    const rows = await charges(user.accountId);
    assert.ok(rows.every((row) => row.phone_number_id === bought.id && row.amount_usd === '1.15'));
    for (let i = 1; i < rows.length; i++)
      assert.equal(rows[i]!.period_start.getTime(), rows[i - 1]!.period_end.getTime(), 'periods follow on');

    // Released, it is not renewed; its charges stay for billing.
    await ok(user, 'DELETE', `/phone-numbers/${bought.id}`);
    shiftMs = 12 * 31 * DAY_MS;
    assert.equal(await renew(), 5);
    const kept = await t.services.numbers.chargesBetween(
      user.accountId,
      new Date(0),
      new Date(Date.now() + 400 * DAY_MS),
    );
    assert.equal(kept.length, 5);
    assert.deepEqual(
      { ...kept[0], id: undefined, periodStart: undefined, periodEnd: undefined },
      {
        id: undefined,
        phoneNumberId: null,
        number: bought.number,
        description: `Monthly fee for ${bought.number}`,
        amountUsd: '1.15',
        periodStart: undefined,
        periodEnd: undefined,
      },
    );
  } finally {
    shiftMs = 0;
  }
});

test('monthly fees come from NUMBER_MONTHLY_FEES_USD; a country without a price is not sold', async () => {
  const app = await buildTestApp({ env: { NUMBER_MONTHLY_FEES_USD: 'US=0.99, GB=2' } });
  try {
    const user = await signUp(app.app);
    const get = (url: string) => app.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: user.headers });
    assert.equal(
      (await get('/phone-numbers/inventory/search?country=US&areaCode=415&limit=1')).json().availableNumbers[0]
        .monthlyFeeUsd,
      '0.99',
    );
    assert.equal(
      (await get('/phone-numbers/inventory/search?country=GB&areaCode=20&limit=1')).json().availableNumbers[0]
        .monthlyFeeUsd,
      '2.00',
    );
    const canada = await get('/phone-numbers/inventory/search?country=CA&areaCode=416');
    assert.equal(canada.statusCode, 400);
    assert.match(errorBody(canada).message, /numbers in CA are not for sale here/);
    const bought = await app.app.inject({
      method: 'POST',
      url: '/api/v1/phone-numbers/inventory/purchase',
      headers: user.headers,
      payload: { number: '+442079460000' },
    });
    assert.equal(bought.json().monthlyFeeUsd, '2.00');
  } finally {
    await app.close();
  }
  for (const bad of ['US', 'US=abc', 'USA=1', 'US=1.001', 'us=1', 'US=1,']) {
    assert.throws(() => loadConfig({ NUMBER_MONTHLY_FEES_USD: bad }), ConfigError, bad);
  }
  assert.deepEqual(loadConfig({}).numberMonthlyFeesUsd, { US: '1.15', CA: '1.15', GB: '1.50', '*': '2.00' });
  assert.deepEqual(loadConfig({ NUMBER_MONTHLY_FEES_USD: '*=007.5' }).numberMonthlyFeesUsd, { '*': '7.50' });
});
