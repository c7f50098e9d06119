/**
 * Tenant scoping, checked on the SQL itself. A statement that touches a table holding tenant data (one with an
 * account_id column) must scope EACH such table it names by account (see test/sql-scope.ts for what counts). Checked:
 * - every query method of every repo, compiled through Kysely against a driver that answers every query with a
 *   stand-in row, so a method runs through all its steps (a method that throws fails the test: give it an example);
 * - every statement the app runs on a workload of the paths that write SQL by hand outside the repos (contact
 *   imports, bulk do-not-call changes, the staging helpers, a campaign loading its lists' members, ownership
 *   checks), recorded as they run, including the undo of a bulk change that fails after its first step.
 * The few statements that are scoped some other way are listed below, each with its reason.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  type DatabaseConnection,
  type Driver,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import type { Database } from '../src/db/types.js';
import { agentQueries } from '../src/modules/agents/agents.repo.js';
import { apiKeyQueries } from '../src/modules/api-keys/api-keys.repo.js';
import { auditQueries } from '../src/modules/audit/audit.repo.js';
import { authQueries } from '../src/modules/auth/auth.repo.js';
import { callQueries } from '../src/modules/calls/calls.repo.js';
import { callAdminQueries } from '../src/modules/calls/calls.admin-repo.js';
import { contactQueries } from '../src/modules/contacts/contacts.repo.js';
import { dncQueries } from '../src/modules/dnc/dnc.repo.js';
import { numberQueries } from '../src/modules/numbers/numbers.repo.js';
import { dispositionQueries } from '../src/modules/dispositions/dispositions.repo.js';
import { catalogQueries } from '../src/modules/catalog/catalog.repo.js';
import { domainEventQueries } from '../src/events/domain-events.repo.js';
import { knowledgeQueries } from '../src/modules/knowledge/knowledge.repo.js';
import { webhookQueries } from '../src/modules/webhooks/webhooks.repo.js';
import { campaignQueries } from '../src/modules/campaigns/campaigns.repo.js';
import { buildTestApp, signUp, type TestApp } from './helpers.js';
import { api, SALES_AGENT } from './calls-kit.js';
import { unscopedTenantTables } from './sql-scope.js';

/** Statements not scoped by account, and why that is right. */
const UNSCOPED: Record<string, string> = {
  'apiKeys.findForAuth': 'the key hash is what names the account',
  'auth.listMemberships': "a user's own memberships, across the accounts they belong to",
  'auth.findLiveSession': 'the session token hash is what names the user and account',
  'auth.touchSession': 'by the id of the session just authenticated',
  'auth.deleteDeadSessions': 'housekeeping across all accounts (a scheduled job)',
  'auth.listSessions': "a user's own sessions",
  'auth.revokeOtherSessions': "a user's own sessions",
  'auth.revokeSession': "the caller's own session",
  'domainEvents.find': "a subscriber's job carries only the event id",
  'domainEvents.deleteBefore': 'retention across all accounts (a scheduled job)',
  'contacts.lostImportCandidates': 'the sweep of imports whose process stopped, across all accounts (a scheduled job)',
  'calls.findAnyAccount':
    'platform tools, signed provider callbacks and signed asset URLs name a call by id; the signature or admin check is the access',
  'calls.accountsWithQueuedCalls': "the scheduled dispatcher goes through every account's queue",
  'calls.lostCallCandidates': "the sweep after a crash looks at every account's live calls",
  'callsAdmin.listPage': 'the platform administrator lists the calls of every account (platform-admin route)',
  'callsAdmin.count': 'the platform administrator lists the calls of every account (platform-admin route)',
  'callsAdmin.accountOfCall': 'the platform administrator names a call by id alone and the call decides the account',
  'callsAdmin.agentById':
    "a platform administrator's test call names an agent by id alone and the agent decides the account",
  'callsAdmin.agentPickerPage': "the platform administrator's agent picker spans every account",
  'callsAdmin.agentPickerCount': "the platform administrator's agent picker spans every account",
  'numbers.takenAmong':
    'a number is unique platform-wide: the inventory leaves out numbers any account holds (it reads the numbers only)',
  'numbers.routeOf': 'an inbound call names only the dialled number, and the number decides the account',
  'numbers.renewDueCharges': 'monthly fees across all accounts (a scheduled job)',
  'webhooks.claimDue': 'the dispatcher of a worker process claims due deliveries of every account',
  'webhooks.takeOverExpiredLeases':
    'the dispatcher takes over the batches, of any account, that a dispatcher which died had claimed',
  'webhooks.endpointsByIds': 'the dispatcher reads the endpoints of the deliveries it just claimed, by their ids',
  'webhooks.recordOutcomes':
    'records the attempts of a batch the dispatcher claimed across accounts, by delivery id and claimed version',
  'webhooks.allEndpoints': 'retention goes through the endpoints of every account (a scheduled job)',
  'campaigns.runningCampaigns': "the scheduled sweep wakes every account's running campaigns",
};

const ACCOUNT = '00000000-0000-4000-8000-0000000000aa';
const ID = '00000000-0000-4000-8000-0000000000bb';

/** Stands in for any argument: every property is another stand-in, so every optional filter is "set". */
function anything(): any {
  return new Proxy(
    {},
    {
      get(_, property) {
        if (property === Symbol.toPrimitive) return () => 1;
        if (property === 'then' || property === 'toOperationNode') return undefined;
        if (property === Symbol.iterator) return function* () {};
        if (property === 'toISOString') return () => '2026-01-01T00:00:00.000Z';
        return anything();
      },
      ownKeys: () => [],
    },
  );
}

/**
 * Stands in for any value a query answers: like `anything()`, callable too (`row.name.trim()`), and a query
 * parameter when passed back into a query.
 */
function anyValue(): any {
  return new Proxy(() => undefined, {
    get(_, property) {
      if (property === Symbol.toPrimitive) return () => 1;
      if (property === 'then') return undefined;
      if (property === 'toOperationNode') return () => ({ kind: 'ValueNode', value: 1 });
      if (property === Symbol.iterator) return function* () {};
      if (property === 'toISOString') return () => '2026-01-01T00:00:00.000Z';
      return anyValue();
    },
    apply: () => anyValue(),
    ownKeys: () => [],
  });
}

/** Arguments for methods the stand-in cannot fill (they branch on the argument's shape). */
const EXAMPLES: Record<string, (q: any) => Promise<unknown>> = {
  'contacts.setDncFlag': (q) => q.setDncFlag(ACCOUNT, ['+14155552671'], true, new Date()),
  'contacts.flagDncAmong': (q) => q.flagDncAmong(ACCOUNT, sql`SELECT '+1'`, new Date(), 'noted'),
  'contacts.update': (q) =>
    q.update(
      ACCOUNT,
      ID,
      { first_name: 'A', phone_e164: '+14155552671', attributes: { a: 'b', c: null } },
      sql`SELECT '+1'`,
      new Date(),
    ),
  'contacts.exportBatch': (q) =>
    q.exportBatch(ACCOUNT, { listId: ID, q: 'ada 415', phoneE164: '+1', dnc: true }, { at: '2026-01-01', id: ID }, 10),
  'contacts.listContacts': async (q) => {
    const filters = { listId: ID, q: 'ada 415', phoneE164: '+1', dnc: true };
    await q.listContacts(ACCOUNT, filters, { limit: 10, offset: 0 });
    // A full page (the stand-in row) with a count limit: the limited count runs too.
    await q.listContacts(ACCOUNT, filters, { limit: 1, offset: 0 }, 1000);
  },
  'calls.listPage': (q) =>
    q.listPage(ACCOUNT, { status: 'completed', agentId: ID, createdFrom: new Date() }, { limit: 10, offset: 200 }),
  'calls.count': (q) => q.count(ACCOUNT, { status: 'completed', contactId: ID }),
  'calls.countEvents': (q) => q.countEvents(ACCOUNT, {}),
  'auth.insertAccountWithOwner': (q) =>
    q.insertAccountWithOwner({
      accountId: ACCOUNT,
      accountName: 'A',
      userId: ID,
      email: 'a@example.com',
      name: null,
      passwordHash: 'x',
    }),
  'auth.insertSession': (q) =>
    q.insertSession({
      id: ID,
      tokenHash: 'x',
      userId: ID,
      accountId: ACCOUNT,
      ip: null,
      userAgent: null,
      expiresAt: new Date(),
    }),
  'domainEvents.insertAll': (q) =>
    q.insertAll([
      {
        id: ID,
        type: 'agent.created',
        accountId: ACCOUNT,
        subject: { type: 'agent', id: ID },
        data: { name: 'A', status: 'draft', version: 1 },
        actor: null,
        occurredAt: new Date(),
      },
    ]),
  'domainEvents.insert': (q) =>
    q.insert({
      id: ID,
      type: 'agent.created',
      accountId: ACCOUNT,
      subject: { type: 'agent', id: ID },
      data: {},
      actor: null,
      occurredAt: new Date(),
    }),
  'dnc.list': (q) => q.list(ACCOUNT, '415 asked', { limit: 10, offset: 0 }),
  'calls.lostCallCandidates': (q) => q.lostCallCandidates({ staleBefore: new Date() }),
  'calls.insertEvents': (q) =>
    q.insertEvents(ACCOUNT, [{ callId: ID, type: 'call.turn', data: {}, occurredAt: new Date() }]),
  'calls.insertTurns': (q) =>
    q.insertTurns(ACCOUNT, [{ callId: ID, seq: 0, speaker: 'agent', text: 'Hi', startMs: 0, endMs: 1 }]),
  'calls.insertCostItems': (q) =>
    q.insertCostItems(
      ACCOUNT,
      ID,
      [{ kind: 'llm', description: 'x', quantity: '1', unit: 'x', unit_price_usd: '1', amount_usd: '1' }],
      new Date(),
    ),
  'knowledge.search': (q) => q.search(ACCOUNT, ID, 'english', 'warranty', 10),
  'knowledge.replace': (q) =>
    q.replace(ACCOUNT, ID, {
      chunks: [{ seq: 0, heading: 'H', content: 'C', tokens: 1, embedding: [0.5] }],
      language: 'english',
      sourceHash: 'x',
      characters: 1,
      at: new Date(),
    }),
  'calls.updateCall': (q) => q.updateCall(ACCOUNT, ID, { status: 'ringing' }, { beat: true }),
  'callsAdmin.listPage': (q) => q.listPage({ status: 'completed', number: '415' }, { limit: 10, offset: 0 }),
  'callsAdmin.count': (q) => q.count({ direction: 'inbound' }),
  'callsAdmin.agentPickerPage': (q) => q.agentPickerPage({ q: 'sal' }, { limit: 10, offset: 0 }),
  'callsAdmin.agentPickerCount': (q) => q.agentPickerCount({}),
  'callsAdmin.accountPickerPage': (q) => q.accountPickerPage({ q: 'acme' }, { limit: 10, offset: 0 }),
  'callsAdmin.accountPickerCount': (q) => q.accountPickerCount({}),
  'numbers.list': (q) => q.list(ACCOUNT, { unassigned: true }, { limit: 10, offset: 0 }),
  'numbers.takenAmong': (q) => q.takenAmong(['+14155550100']),
  'numbers.routeOf': (q) => q.routeOf('+14155550100'),
  'numbers.renewDueCharges': (q) => q.renewDueCharges(new Date()),
  'dispositions.insertMissing': (q) =>
    q.insertMissing(ACCOUNT, [{ id: ID, code: 'busy', label: 'Busy', category: 'neutral', is_system: true }]),
  'campaigns.loadContacts': (q) => q.loadContacts(ACCOUNT, ID, sql`SELECT 1 AS contact_id`, new Date()),
  'campaigns.addStats': (q) => q.addStats(ACCOUNT, ID, { dialed: 1 }, '0.1'),
  'webhooks.insertDeliveries': (q) =>
    q.insertDeliveries(ACCOUNT, [
      {
        id: ID,
        endpoint_id: ID,
        event_id: ID,
        event_type: 'call.queued',
        subject_id: ID,
        occurred_at: new Date(),
        body: '{}',
        state: 'pending',
        next_attempt_at: new Date(),
        created_at: new Date(),
        updated_at: new Date(),
      },
    ]),
  'webhooks.recordOutcomes': (q) =>
    q.recordOutcomes(
      [
        {
          deliveryId: ID,
          attemptNumber: 1,
          version: '1',
          attempt: {
            number: 1,
            startedAt: new Date().toISOString(),
            finishedAt: new Date().toISOString(),
            statusCode: 200,
            latencyMs: 1,
            error: null,
            responseBody: null,
          },
          state: 'succeeded',
          nextAttemptAt: null,
        },
      ],
      new Date(),
    ),
  'webhooks.claimDue': (q) => q.claimDue(new Date(), 10, { id: ID, until: new Date() }),
  'webhooks.endpointsByIds': (q) => q.endpointsByIds([ID]),
  'webhooks.releaseLeaseLockingEndpoints': (q) => q.releaseLeaseLockingEndpoints(ID, [{ accountId: ACCOUNT, id: ID }]),
  'campaigns.settleContacts': (q) => q.settleContacts(ACCOUNT, ID, [{ contactId: ID, state: 'in_call', attempts: 1 }]),
  'campaigns.decideAttempts': (q) =>
    q.decideAttempts(ACCOUNT, [
      {
        id: ID,
        campaignId: ID,
        contactId: ID,
        number: 1,
        decision: 'allow',
        status: 'dialed',
        fromNumber: '+1',
        at: new Date(),
      },
    ]),
  'campaigns.setAttemptCalls': (q) => q.setAttemptCalls(ACCOUNT, [{ attemptId: ID, callId: ID }]),
  'campaigns.countUpMany': (q) => q.countUpMany(ACCOUNT, ID, 'denial', new Map([['dnc_listed', 2]])),
  'catalog.replaceRates': (q) =>
    q.replaceRates([{ country: '*', inbound_per_minute_usd: '0.01', outbound_per_minute_usd: '0.02' }], new Date()),
};

const REPOS = {
  agents: agentQueries,
  apiKeys: apiKeyQueries,
  audit: auditQueries,
  auth: authQueries,
  calls: callQueries,
  callsAdmin: callAdminQueries,
  contacts: contactQueries,
  dnc: dncQueries,
  numbers: numberQueries,
  dispositions: dispositionQueries,
  catalog: catalogQueries,
  domainEvents: domainEventQueries,
  knowledge: knowledgeQueries,
  webhooks: webhookQueries,
  campaigns: campaignQueries,
};

/** The stand-in answer of every query: one row of stand-ins, one row affected. */
const standInResult = (): QueryResult<UnknownRow> => ({
  rows: [anyValue()],
  numAffectedRows: 1n,
  numChangedRows: 1n,
});

// A method issuing more statements than this is looping on the stand-in answers.
const MAX_STATEMENTS_PER_METHOD = 200;

/** A Kysely that records the SQL of every query and answers each with a stand-in row, without a database. */
function recordingDb() {
  const statements: string[] = [];
  const connection: DatabaseConnection = {
    async executeQuery(query) {
      statements.push(query.sql);
      if (statements.length > MAX_STATEMENTS_PER_METHOD) throw new Error('too many statements: a loop?');
      return standInResult() as never;
    },
    async *streamQuery(query) {
      statements.push(query.sql);
      yield standInResult() as never;
    },
  };
  const driver: Driver = {
    async init() {},
    async acquireConnection() {
      return connection;
    },
    async beginTransaction() {},
    async commitTransaction() {},
    async rollbackTransaction() {},
    async releaseConnection() {},
    async destroy() {},
  };
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, statements };
}

/**
 * Records the SQL of every query the app runs; `failNext(match)` makes the next statement that matches fail before
 * it runs, as a lost connection would.
 */
class SqlRecorder implements KyselyPlugin {
  readonly statements: string[] = [];
  #failWhen: ((statement: string) => boolean) | null = null;
  readonly #compiler = new PostgresQueryCompiler();

  failNext(match: (statement: string) => boolean) {
    this.#failWhen = match;
  }

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    const statement = this.#compiler.compileQuery(node, queryId).sql;
    this.statements.push(statement);
    if (this.#failWhen?.(statement)) {
      this.#failWhen = null;
      throw new Error('failure injected by the scoping test');
    }
    return node;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

const recorder = new SqlRecorder();
let t: TestApp;
let tenant: Set<string>;
before(async () => {
  t = await buildTestApp({ plugins: [recorder] });
  const { rows } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'account_id'`.execute(
    t.infra.database.db,
  );
  tenant = new Set(rows.map((row) => row.table_name));
});
after(() => t.close());

const TENANT_EXAMPLE = new Set(['contacts', 'contact_lists', 'contact_list_members', 'calls', 'dnc_entries']);

test('the scoping check: each tenant table of a statement needs its own account condition', () => {
  const cases: Array<[string, string[]]> = [
    ['select * from "contacts" where "account_id" = $1', []],
    ['select * from "contacts" where "contacts"."account_id" in ($1, $2)', []],
    ['SELECT id FROM contacts WHERE account_id = ANY($1::uuid[])', []],
    ['select * from "contacts" where $1 = "contacts"."account_id"', []],
    ['select * from "contacts" where "id" = $1', ['contacts']],
    ['select * from "users" where "id" = $1', []],
    // A join to a second tenant table that is not scoped: the first table's condition does not cover it.
    [
      'select * from "contacts" as "c" inner join "calls" as "k" on "k"."contact_id" = "c"."id" where "c"."account_id" = $1',
      ['calls (as k)'],
    ],
    [
      'select * from "contacts" as "c" inner join "calls" as "k" on "k"."contact_id" = "c"."id" and "k"."account_id" = "c"."account_id" where "c"."account_id" = $1',
      [],
    ],
    // An unqualified account_id is ambiguous between two tenant tables, and scopes neither.
    ['select * from "contacts" as "c", "calls" as "k" where "account_id" = $1', ['contacts (as c)', 'calls (as k)']],
    // A subquery is a scope of its own.
    [
      'select * from "contacts" where "account_id" = $1 and "id" in (select "contact_id" from "contact_list_members" where "list_id" = $2)',
      ['contact_list_members'],
    ],
    [
      'select * from "contacts" where "account_id" = $1 and exists (select 1 from "calls" where "calls"."contact_id" = "contacts"."id" and "calls"."account_id" = "contacts"."account_id")',
      [],
    ],
    ['SELECT 1 FROM contacts WHERE account_id = $1 UNION ALL SELECT 1 FROM calls WHERE id = $2', ['calls']],
    ['SELECT 1 FROM contacts WHERE account_id = $1 UNION ALL SELECT 1 FROM calls WHERE account_id = $2', []],
    ['insert into "contacts" ("id", "account_id") values ($1, $2)', []],
    ['insert into "contacts" ("id", "phone_e164") values ($1, $2)', ['contacts']],
    [
      'WITH added AS (INSERT INTO contact_list_members (list_id, contact_id, account_id) SELECT $1, id, $2 FROM contacts c WHERE c.account_id = $3) SELECT count(*) FROM added',
      [],
    ],
    ['DELETE FROM contact_list_members WHERE list_id = $1', ['contact_list_members']],
    [
      'UPDATE contacts c SET first_name = p.first_name FROM previous_rows p WHERE c.account_id = $1 AND c.id = p.id',
      [],
    ],
    [
      'update "contacts" set "dnc" = $1 where "phone_e164" in (select "phone_e164" from "dnc_entries")',
      ['contacts', 'dnc_entries'],
    ],
    ['select "id" from "contacts" where "account_id" = $1 for update', []],
    ['select extract(epoch from "created_at") from "calls" where "account_id" = $1 and "note" = \'from calls\'', []],
  ];
  for (const [statement, unscoped] of cases)
    assert.deepEqual(unscopedTenantTables(statement, TENANT_EXAMPLE), unscoped, statement);
});

/** Every statement each repo method issues, by method name, compiled against the recording driver. */
async function repoStatements() {
  const byMethod = new Map<string, string[]>();
  const problems: string[] = [];
  for (const [repoName, queries] of Object.entries(REPOS)) {
    const { db, statements } = recordingDb();
    const repo = queries(db as never) as Record<string, unknown>;
    for (const [method, fn] of Object.entries(repo)) {
      if (typeof fn !== 'function') continue;
      const name = `${repoName}.${method}`;
      statements.length = 0;
      const example = EXAMPLES[name];
      try {
        await (example
          ? example(repo)
          : (fn as (...args: unknown[]) => unknown)(ACCOUNT, anything(), anything(), anything(), anything()));
      } catch (error) {
        problems.push(`${name} threw (${(error as Error).message}): give it an example in EXAMPLES that runs through`);
      }
      if (statements.length === 0) problems.push(`${name} compiled no SQL: give it an example in EXAMPLES`);
      byMethod.set(name, [...statements]);
    }
  }
  for (const name of Object.keys(EXAMPLES))
    if (!byMethod.has(name)) problems.push(`${name} is no repo method any more: remove its example from EXAMPLES`);
  return { byMethod, problems };
}

test('every repo statement scopes each tenant table it names by account', async () => {
  assert.ok(tenant.has('agents') && tenant.has('contacts') && !tenant.has('users'));
  const { byMethod, problems } = await repoStatements();
  const unusedExceptions = new Set(Object.keys(UNSCOPED));
  for (const [name, statements] of byMethod) {
    for (const statement of statements) {
      const unscoped = unscopedTenantTables(statement, tenant);
      if (unscoped.length === 0) continue;
      if (UNSCOPED[name]) {
        unusedExceptions.delete(name);
        continue;
      }
      problems.push(`${name} uses ${unscoped.join(', ')} without account_id: ${statement}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.deepEqual([...unusedExceptions], [], 'exceptions that no longer apply: remove them from UNSCOPED');
});

const csv = (rows: string[]) => ({ 'content-type': 'text/csv', payload: rows.join('\n') });
const isDomainEventInsert = (statement: string) => /^insert into "?domain_events"?/i.test(statement.trim());

test('every statement of the bulk paths, the staging helpers and the lists a campaign loads is scoped', async () => {
  const user = await signUp(t.app);
  const { ok } = api(t, user);
  const post = (url: string, body: { 'content-type': string; payload: string }, expected = 200) =>
    t.app
      .inject({
        method: 'POST',
        url: `/api/v1${url}`,
        headers: { ...user.headers, 'content-type': body['content-type'] },
        payload: body.payload,
      })
      .then((response) => {
        assert.equal(response.statusCode, expected, `${url}: ${response.body}`);
        return response.json();
      });
  const phones = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `+1415555${String(from + i).padStart(4, '0')}`);
  const { statements } = recorder;
  statements.length = 0;

  // Imports, a second import of the same numbers that updates them, and the lists' reads and export.
  const imported = await post(
    '/contact-lists?name=Leads&defaultCountry=US',
    csv(['Phone,First Name', ...phones(0, 20).map((p) => `${p},Ada`)]),
  );
  await post(
    '/contact-lists?name=Again&defaultCountry=US&duplicatePolicy=update',
    csv(['Phone,First Name', ...phones(10, 20).map((p) => `${p},Bea`)]),
  );
  await ok('GET', `/contacts?listId=${imported.listId}&q=ada&dnc=false`);
  await ok('GET', `/contact-lists/${imported.listId}/contacts?limit=5`);
  const contact = (await ok('GET', `/contacts?listId=${imported.listId}&limit=1`)).contacts[0];
  await ok('PATCH', `/contacts/${contact.id}`, { phone: '+14155559999', attributes: { tier: 'gold' } });
  const exported = await t.app.inject({
    method: 'GET',
    url: `/api/v1/exports/contacts.csv?listId=${imported.listId}`,
    headers: user.headers,
  });
  assert.equal(exported.statusCode, 200, exported.body);

  // The do-not-call list: one number, a bulk of JSON items and one of CSV (some of them contacts), a removal.
  await ok('POST', '/dnc', { phone: phones(0, 1)[0], reason: 'asked' });
  await post('/dnc/bulk', { 'content-type': 'application/json', payload: JSON.stringify(phones(1, 5)) });
  await post('/dnc/bulk', csv(['phone,reason', ...phones(6, 5).map((p) => `${p},asked`)]));
  await ok('DELETE', `/dnc/${encodeURIComponent(phones(1, 1)[0]!)}`);
  await ok('GET', '/dnc?q=415');

  // Bulk changes that fail at their last step: on PGlite, what the steps before it wrote is undone.
  recorder.failNext(isDomainEventInsert);
  await post('/contact-lists?name=Failing&defaultCountry=US', csv(['Phone', ...phones(100, 10)]), 500);
  recorder.failNext(isDomainEventInsert);
  await post(
    '/contact-lists?name=Failing&defaultCountry=US&duplicatePolicy=update',
    csv(['Phone', ...phones(0, 10)]),
    500,
  );
  recorder.failNext(isDomainEventInsert);
  await post('/dnc/bulk', { 'content-type': 'application/json', payload: JSON.stringify(phones(200, 5)) }, 500);

  // A campaign over the list loads its members; its agent and numbers are checked as the caller's own.
  const agent = await ok('POST', '/agents', { ...SALES_AGENT, voicemail: { action: 'hang_up' } });
  const number = await ok('POST', '/phone-numbers', { number: '+14155550199' });
  const campaign = await ok('POST', '/campaigns', {
    name: 'Scoped',
    agentId: agent.id,
    contactListIds: [imported.listId],
    fromNumberIds: [number.id],
  });
  await ok('POST', `/campaigns/${campaign.id}/start`);

  // The workload reached the paths it is for.
  const seen = (pattern: RegExp) => statements.some((statement) => pattern.test(statement));
  assert.ok(seen(/json_to_recordset/i), 'rows were staged');
  assert.ok(seen(/insert into contact_list_members/i), 'an import merged its members');
  assert.ok(seen(/insert into dnc_entries/i), 'a bulk do-not-call change merged');
  assert.ok(seen(/insert into "?campaign_contacts"?/i), "the campaign loaded its lists' members");
  if (t.infra.database.kind === 'pglite')
    assert.ok(seen(/^\s*delete from contact_list_members/i), 'an import was undone');

  // Statements the repo check already judged (with their exceptions) are not judged twice.
  const { byMethod } = await repoStatements();
  const judged = new Set([...byMethod.values()].flat());
  const problems = [...new Set(statements)]
    .filter((statement) => !judged.has(statement))
    .flatMap((statement) => {
      const unscoped = unscopedTenantTables(statement, tenant);
      return unscoped.length ? [`${unscoped.join(', ')} without account_id: ${statement.replace(/\s+/g, ' ')}`] : [];
    });
  assert.deepEqual(problems, []);
});
