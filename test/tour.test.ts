import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './helpers.js';

// The README's five-minute tour, step by step, as a client would run it. The tour block itself, run by bash as
// written against the real server, is in demo.test.ts (it shares the demo's servers).
let t: TestApp;
before(async () => (t = await buildTestApp()));
after(() => t.close());

test('the README tour works end to end', async () => {
  const register = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'ada@example.com', password: 'a long passphrase', accountName: 'Acme Sales' },
  });
  assert.equal(register.statusCode, 200);
  const cookie = `vsid=${register.cookies.find((c) => c.name === 'vsid')!.value}`;

  const key = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { cookie },
    payload: { name: 'tour' },
  });
  assert.equal(key.statusCode, 200);
  const auth = { authorization: `Bearer ${key.json().key}` };

  const agent = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: auth,
    payload: { name: 'Appointment setter', mission: 'Book a demo with the lead' },
  });
  assert.equal(agent.statusCode, 200);
  const patched = await t.app.inject({
    method: 'PATCH',
    url: `/api/v1/agents/${agent.json().id}`,
    headers: auth,
    payload: { soul: 'Warm, brief, never pushy.', status: 'active' },
  });
  assert.equal(patched.statusCode, 200);
  assert.equal(patched.json().version, 2);
  assert.equal(patched.json().status, 'active');
  const agents = await t.app.inject({ method: 'GET', url: '/api/v1/agents', headers: auth });
  assert.equal(agents.json().agents.length, 1);

  const csv = 'First Name,Last Name,Phone Number,Email\nAda,Lovelace,(415) 555-2671,ada@example.com\n';
  const imported = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=Leads&defaultCountry=US',
    headers: { ...auth, 'content-type': 'text/csv' },
    payload: csv,
  });
  assert.equal(imported.statusCode, 200);
  assert.equal(imported.json().counts.imported, 1);
  const contacts = await t.app.inject({ method: 'GET', url: '/api/v1/contacts?q=ada', headers: auth });
  assert.equal(contacts.json().contacts[0].phone, '+14155552671');

  const calls = await t.app.inject({
    method: 'GET',
    url: '/api/v1/calls?status=completed&limit=25&offset=0',
    headers: auth,
  });
  assert.deepEqual(calls.json(), { calls: [], total: 0, limit: 25, offset: 0 });

  const bad = await t.app.inject({ method: 'GET', url: '/api/v1/calls?status=bogus', headers: auth });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().error, 'validation_failed');
  assert.match(bad.json().message, /querystring\/status must be one of/);
});
