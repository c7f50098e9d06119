import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
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
  assert.deepEqual(
    rows.map((r) => r.parts),
    [
      { mission: 'Book a demo.' },
      { mission: 'Book a demo this week.', playbook: 'Ask for a day.' },
      { firstMessage: 'Hello!' },
      { knowledgeBase: 'Pricing: $49/month.' },
      { playbook: '' },
    ],
    'each version stores the parts it changed, and only those',
  );
  const v3Read = await call(owner, 'GET', `/agents/${agent.id}/versions/3`);
  assert.deepEqual(v3Read.json().parts, {
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
  const v5Read = (await call(owner, 'GET', `/agents/${agent.id}/versions/5`)).json();
  assert.equal(v5Read.parts.knowledgeBase, 'Pricing: $49/month.');
  assert.equal(v5Read.parts.playbook, '');
  assert.equal(v5Read.parts.firstMessage, 'Hello!');
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
  assert.deepEqual(
    Object.keys(body.versions[0]).sort(),
    ['changedParts', 'createdAt', 'createdByApiKeyId', 'createdByUserId', 'version'],
    'a list says what changed, without the text',
  );
  assert.deepEqual(body.versions[0].changedParts, ['soul']);
  assert.equal(body.versions[0].createdByApiKeyId, owner.apiKeyId);
  const read = await Promise.all(
    [4, 3, 2, 1].map(async (version) => (await call(owner, 'GET', `/agents/${agent.id}/versions/${version}`)).json()),
  );
  assert.deepEqual(
    read.map((v: { parts: { soul: string } }) => v.parts.soul),
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
  const { parts, ...summary } = one.json();
  assert.deepEqual(summary, body.versions[2]);
  assert.equal(parts.soul, 'v2');
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

test('versions stay lean: a list carries no prompt text, and a save stores only the parts it changed', async (context) => {
  const owner = await signUp(t.app);
  // A knowledge base near its 200,000-character limit, saved 11 times over 30 versions.
  const knowledge = (n: number) => `Fact ${n}. `.padEnd(199_000, `Detail ${n}. `);
  const agent = await buildAgent(owner, { mission: 'm1', knowledgeBase: knowledge(1) });
  const expected = new Map<number, { mission: string; knowledgeBase: string }>([
    [1, { mission: 'm1', knowledgeBase: knowledge(1) }],
  ]);
  for (let version = 2; version <= 30; version++) {
    const previous = expected.get(version - 1)!;
    const next =
      version % 3 === 0 ? { ...previous, knowledgeBase: knowledge(version) } : { ...previous, mission: `m${version}` };
    const saved = await call(owner, 'PATCH', `/agents/${agent.id}`, next);
    assert.equal(saved.json().version, version);
    expected.set(version, next);
  }

  const list = await call(owner, 'GET', `/agents/${agent.id}/versions?limit=500`);
  assert.equal(list.statusCode, 200);
  assert.equal(list.json().versions.length, 30);
  context.diagnostic(`a page of 30 versions: ${list.body.length} bytes`);
  assert.ok(list.body.length < 10_000, `a page of 30 versions is ${list.body.length} bytes`);

  const stored = await t.infra.database.db
    .selectFrom('agent_versions')
    .select((eb) => eb.fn.sum<string>(eb.fn('length', [eb.cast('parts', 'text')])).as('bytes'))
    .where('agent_id', '=', agent.id)
    .executeTakeFirstOrThrow();
  // Version 1 and the ten saves of the knowledge base store it (full copies would be 30); the others a mission.
  assert.ok(Number(stored.bytes) < 11.5 * 199_000, `the versions store ${stored.bytes} bytes`);

  for (const [version, parts] of expected) {
    const one = (await call(owner, 'GET', `/agents/${agent.id}/versions/${version}`)).json();
    assert.equal(one.parts.mission, parts.mission, `version ${version}`);
    assert.ok(one.parts.knowledgeBase === parts.knowledgeBase, `the knowledge base of version ${version}`);
    assert.deepEqual(
      one.changedParts,
      version === 1 ? ['mission', 'knowledgeBase'] : version % 3 === 0 ? ['knowledgeBase'] : ['mission'],
    );
  }
});

test('versions saved in full before versions were lean read the same once migrated', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner, { soul: 'Calm.', mission: 'm1' });
  await call(owner, 'PATCH', `/agents/${agent.id}`, { mission: 'm2' });
  await call(owner, 'PATCH', `/agents/${agent.id}`, { notes: 'n3', soul: '' });
  const lean = await Promise.all(
    [1, 2, 3].map(async (v) => (await call(owner, 'GET', `/agents/${agent.id}/versions/${v}`)).json()),
  );
  // The rows as they were written before: each a full snapshot.
  const db = t.infra.database.db;
  for (const version of lean) {
    await db
      .updateTable('agent_versions')
      .set({ parts: JSON.stringify(version.parts) } as never)
      .where('agent_id', '=', agent.id)
      .where('version', '=', version.version)
      .execute();
  }
  assert.equal(Object.keys((await versionRows(agent.id))[1]!.parts).length, 10);
  const migration = readFileSync(new URL('../../db/migrations/0020_lean_agent_versions.sql', import.meta.url), 'utf8');
  await sql.raw(migration).execute(db);

  assert.deepEqual(
    (await versionRows(agent.id)).map((row) => row.parts),
    [{ soul: 'Calm.', mission: 'm1' }, { mission: 'm2' }, { soul: '', notes: 'n3' }],
  );
  for (const version of lean) {
    const read = await call(owner, 'GET', `/agents/${agent.id}/versions/${version.version}`);
    assert.deepEqual(read.json(), version);
  }
});
