import assert from 'node:assert/strict';
import { buildTestApp, type SignedUp, type TestApp } from '../../../test/helpers.js';

/** Shared by the agents test files: an app with a stepping clock, and small HTTP and database helpers. */
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type Caller = { headers: Record<string, string> };

export async function buildAgentsTestApp() {
  // Each reading of the clock is a millisecond later than the last, so "newer" is always strictly later.
  let ticks = 0;
  const t = await buildTestApp({ clock: { now: () => new Date(Date.now() + ticks++) } });
  return { t, ...agentsTestKit(t) };
}

function agentsTestKit(t: TestApp) {
  const call = (who: Caller, method: Method, url: string, payload?: object) =>
    t.app.inject({ method, url: `/api/v1${url}`, headers: who.headers, ...(payload ? { payload } : {}) });

  return {
    call,
    asSession: (user: SignedUp): Caller => ({ headers: { cookie: user.cookie } }),

    async createAgent(who: Caller, payload: object = {}) {
      const response = await call(who, 'POST', '/agents', { name: 'Sales agent', ...payload });
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    },

    versionRows: (agentId: string) =>
      t.infra.database.db.selectFrom('agent_versions').selectAll().where('agent_id', '=', agentId).orderBy('version').execute(),

    agentRow: (agentId: string) =>
      t.infra.database.db.selectFrom('agents').selectAll().where('id', '=', agentId).executeTakeFirstOrThrow(),
  };
}

export type AgentsTestKit = Awaited<ReturnType<typeof buildAgentsTestApp>>;
