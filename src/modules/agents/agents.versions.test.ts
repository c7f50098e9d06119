import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, errorBody, signUp } from '../../../test/helpers.js';
import { buildAgent } from '../../../test/factories/index.js';
import { buildAgentsTestApp, type AgentsTestKit } from './agents.test-support.js';

let t: AgentsTestKit['t'];
let versionRows: AgentsTestKit['versionRows'];
let agentRow: AgentsTestKit['agentRow'];
before(async () => ({ t, versionRows, agentRow } = await buildAgentsTestApp()));
after(() => t.close());

test('a changed prompt part or first message bumps the version and saves a snapshot', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner, { mission: 'Book a demo.' });

  const v2 = await call(owner, 'PATCH', `/agents/${agent.id}`, {
    mission: 'Book a demo this week.',
    playbook: 'Ask for a day.',
  });
  assert.equal(v2.statusCode, 200);
  assert.equal(v2.json().version, 2);
  assert.equal(v2.json().mission, 'Book a demo this week.');
  assert.ok(v2.json().updatedAt > agent.updatedAt);

  const v3 = await call(owner, 'PATCH', `/agents/${agent.id}`, { firstMessage: 'Hello!' });
  assert.equal(v3.json().version, 3);
  const v4 = await call(owner, 'PATCH', `/agents/${agent.id}`, { knowledgeBase: 'Pricing: $49/month.' });
  assert.equal(v4.json().version, 4);
  assert.match(v4.json().systemPrompt, /## Knowledge base\nPricing: \$49\/month\.$/);
  const v5 = await call(owner, 'PATCH', `/agents/${agent.id}`, { playbook: '' });
  assert.equal(v5.json().version, 5, 'clearing a part is a change too');

  const rows = await versionRows(agent.id);
  assert.deepEqual(
    rows.map((r) => r.version),
    [1, 2, 3, 4, 5],
  );
  assert.deepEqual(
    rows.map((r) => r.changed_parts),
    [['mission'], ['mission', 'playbook'], ['firstMessage'], ['knowledgeBase'], ['playbook']],
  );
  assert.deepEqual(rows[2]!.parts, {
    soul: '',
    mission: 'Book a demo this week.',
    playbook: 'Ask for a day.',
    examples: '',
    objections: '',
    closers: '',
    notes: '',
    faq: '',
    knowledgeBase: '',
    firstMessage: 'Hello!',
  });
  assert.equal(rows[4]!.parts.knowledgeBase, 'Pricing: $49/month.');
  assert.equal(rows[4]!.parts.playbook, '');
  assert.equal((await agentRow(agent.id)).version, 5);
});

test('settings-only saves and saves that change nothing keep the version', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner, { mission: 'Book a demo.' });

  const settings = await call(owner, 'PATCH', `/agents/${agent.id}`, {
    name: 'Renamed',
    voice: 'en-us',
    liveLlmId: 'parley-playbook',
    status: 'active',
    transfer: { number: '+442071838750', whenToTransfer: 'On request.' },
    voicemail: { action: 'leave_message', message: 'Call us back.' },
  });
  assert.equal(settings.statusCode, 200, settings.body);
  const afterSettings = settings.json();
  assert.equal(afterSettings.version, 1);
  assert.equal(afterSettings.name, 'Renamed');
  assert.equal(afterSettings.voiceId, 'en-us');
  assert.ok(afterSettings.updatedAt > agent.updatedAt, 'settings do update updatedAt');

  // Nested settings merge: a field left out keeps its value.
  const merged = await call(owner, 'PATCH', `/agents/${agent.id}`, {
    transfer: { whenToTransfer: 'Only for billing.' },
  });
  assert.deepEqual(merged.json().transfer, { number: '+442071838750', whenToTransfer: 'Only for billing.' });
  const cleared = await call(owner, 'PATCH', `/agents/${agent.id}`, { transfer: { number: null }, voice: null });
  assert.equal(cleared.json().transfer.number, null);
  assert.equal(cleared.json().voiceId, null);
  assert.equal(cleared.json().version, 1);

  const before = cleared.json();
  for (const payload of [
    {},
    { mission: 'Book a demo.' },
    { name: 'Renamed', status: 'active', voicemail: { action: 'leave_message' } },
  ]) {
    const same = await call(owner, 'PATCH', `/agents/${agent.id}`, payload);
    assert.equal(same.statusCode, 200);
    assert.deepEqual(same.json(), before, `${JSON.stringify(payload)} changes nothing, not even updatedAt`);
  }
  assert.equal((await versionRows(agent.id)).length, 1);
});

test('versions are listed newest first with paging, and one version can be read', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner, { soul: 'v1' });
  for (const soul of ['v2', 'v3', 'v4']) await call(owner, 'PATCH', `/agents/${agent.id}`, { soul });

  const list = await call(owner, 'GET', `/agents/${agent.id}/versions`);
  assert.equal(list.statusCode, 200);
  const body = list.json();
  assert.equal(body.total, 4);
  assert.deepEqual(
    body.versions.map((v: { version: number }) => v.version),
    [4, 3, 2, 1],
  );
  assert.deepEqual(Object.keys(body.versions[0]).sort(), [
    'changedParts',
    'createdAt',
    'createdByApiKeyId',
    'createdByUserId',
    'parts',
    'version',
  ]);
  assert.deepEqual(body.versions[0].changedParts, ['soul']);
  assert.equal(body.versions[0].createdByApiKeyId, owner.apiKeyId);
  assert.deepEqual(
    body.versions.map((v: { parts: { soul: string } }) => v.parts.soul),
    ['v4', 'v3', 'v2', 'v1'],
  );

  const page = (await call(owner, 'GET', `/agents/${agent.id}/versions?limit=2&offset=1`)).json();
  assert.equal(page.total, 4);
  assert.deepEqual(
    page.versions.map((v: { version: number }) => v.version),
    [3, 2],
  );

  const one = await call(owner, 'GET', `/agents/${agent.id}/versions/2`);
  assert.equal(one.statusCode, 200);
  assert.deepEqual(one.json(), body.versions[2]);
  const missing = await call(owner, 'GET', `/agents/${agent.id}/versions/9`);
  assert.equal(missing.statusCode, 404);
  assert.equal(errorBody(missing).message, 'Agent version not found');
  assert.equal((await call(owner, 'GET', `/agents/${agent.id}/versions/0`)).statusCode, 400);
});

test('concurrent saves each get their own version, with no gaps', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner);
  const responses = await Promise.all(
    ['a', 'b', 'c', 'd', 'e'].map((notes) => call(owner, 'PATCH', `/agents/${agent.id}`, { notes })),
  );
  assert.ok(responses.every((r) => r.statusCode === 200));
  assert.deepEqual(responses.map((r) => r.json().version).sort(), [2, 3, 4, 5, 6]);
  assert.deepEqual(
    (await versionRows(agent.id)).map((r) => r.version),
    [1, 2, 3, 4, 5, 6],
  );
});
