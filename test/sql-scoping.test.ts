/**
 * Tenant scoping, checked on the SQL itself: every query method of every repo is compiled through Kysely, and a
 * statement that touches a table holding tenant data (one with an account_id column) without naming account_id
 * fails the test. The few statements that are scoped some other way are listed below, each with its reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import type { Database } from '../src/db/types.js';
import { agentQueries } from '../src/modules/agents/agents.repo.js';
import { apiKeyQueries } from '../src/modules/api-keys/api-keys.repo.js';
import { auditQueries } from '../src/modules/audit/audit.repo.js';
import { authQueries } from '../src/modules/auth/auth.repo.js';
import { callQueries } from '../src/modules/calls/calls.repo.js';
import { callAdminQueries } from '../src/modules/calls/calls-admin.repo.js';
import { contactQueries } from '../src/modules/contacts/contacts.repo.js';
import { dncQueries } from '../src/modules/dnc/dnc.repo.js';
import { numberQueries } from '../src/modules/numbers/numbers.repo.js';
import { dispositionQueries } from '../src/modules/dispositions/dispositions.repo.js';
import { catalogQueries } from '../src/modules/catalog/catalog.repo.js';
import { domainEventQueries } from '../src/events/domain-events.repo.js';
import { knowledgeQueries } from '../src/modules/knowledge/knowledge.repo.js';
import { webhookQueries } from '../src/modules/webhooks/webhooks.repo.js';
import { campaignQueries } from '../src/modules/campaigns/campaigns.repo.js';
import { buildTestApp } from './helpers.js';

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
  'campaigns.loadContacts':
    "an insert of rows carrying the account id, from the contacts service's account-scoped member query",
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
  'contacts.listContacts': (q) =>
    q.listContacts(ACCOUNT, { listId: ID, q: 'ada 415', phoneE164: '+1', dnc: true }, { limit: 10, offset: 0 }),
  'calls.listPage': (q) =>
    q.listPage(ACCOUNT, { status: 'completed', agentId: ID, createdFrom: new Date() }, { limit: 10, offset: 200 }),
  'calls.count': (q) => q.count(ACCOUNT, { status: 'completed', contactId: ID }),
  'calls.countEvents': (q) => q.countEvents(ACCOUNT, {}),
  'calls.pageQuery': (q) => q.pageQuery(ACCOUNT, { status: 'completed' }, { limit: 10, offset: 0 }).execute(),
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
  'calls.numberActivity': (q) => q.numberActivity(ACCOUNT, ['+14155550100'], new Date(), 10),
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

function recordingDb() {
  const statements: string[] = [];
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => void statements.push(event.query.sql),
  });
  return { db, statements };
}

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

async function tenantTables(): Promise<Set<string>> {
  const app = await buildTestApp();
  try {
    const { rows } = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'account_id'`.execute(
      app.infra.database.db,
    );
    return new Set(rows.map((row) => row.table_name));
  } finally {
    await app.close();
  }
}

/** account_id compared with a parameter (a WHERE or ON clause), or written by an INSERT. */
const isScoped = (statement: string) =>
  /account_id"?\s*(=|in)\s*(\$\d|\(\$)/i.test(statement) || /^insert into [^(]+\([^)]*\baccount_id\b/i.test(statement);

const TABLE_REFERENCE = /\b(?:from|join|update|into)\s+"?([a-z_]+)"?/gi;

test('every repo statement on tenant data names account_id', async () => {
  const tenant = await tenantTables();
  assert.ok(tenant.has('agents') && tenant.has('contacts') && !tenant.has('users'));
  const problems: string[] = [];
  const unusedExceptions = new Set(Object.keys(UNSCOPED));
  for (const [repoName, queries] of Object.entries(REPOS)) {
    const { db, statements } = recordingDb();
    const repo = queries(db) as Record<string, unknown>;
    for (const [method, fn] of Object.entries(repo)) {
      if (typeof fn !== 'function') continue;
      const name = `${repoName}.${method}`;
      statements.length = 0;
      const example = EXAMPLES[name];
      await Promise.resolve()
        .then(() =>
          example
            ? example(repo)
            : (fn as (...args: unknown[]) => unknown)(ACCOUNT, anything(), anything(), anything(), anything()),
        )
        .catch(() => undefined); // the dummy driver answers no rows; the SQL was compiled and recorded before that
      if (statements.length === 0) {
        problems.push(`${name} compiled no SQL: give it an example in EXAMPLES`);
        continue;
      }
      for (const statement of statements) {
        const tables = [...statement.matchAll(TABLE_REFERENCE)].map((m) => m[1]!).filter((t) => tenant.has(t));
        if (tables.length === 0 || isScoped(statement)) continue;
        if (UNSCOPED[name]) {
          unusedExceptions.delete(name);
          continue;
        }
        problems.push(`${name} touches ${tables.join(', ')} without account_id: ${statement}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.deepEqual([...unusedExceptions], [], 'exceptions that no longer apply: remove them from UNSCOPED');
});
