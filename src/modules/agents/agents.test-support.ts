import { buildTestApp, type TestApp } from '../../../test/helpers.js';

/** Shared by the agents test files: an app with a stepping clock, and readers of the agents tables. */
export async function buildAgentsTestApp() {
  // Each reading of the clock is a millisecond later than the last, so "newer" is always strictly later.
  let ticks = 0;
  const t = await buildTestApp({ clock: { now: () => new Date(Date.now() + ticks++) } });
  return { t, ...agentsTestKit(t) };
}

function agentsTestKit(t: TestApp) {
  return {
    versionRows: (agentId: string) =>
      t.infra.database.db
        .selectFrom('agent_versions')
        .selectAll()
        .where('agent_id', '=', agentId)
        .orderBy('version')
        .execute(),

    agentRow: (agentId: string) =>
      t.infra.database.db.selectFrom('agents').selectAll().where('id', '=', agentId).executeTakeFirstOrThrow(),
  };
}

export type AgentsTestKit = Awaited<ReturnType<typeof buildAgentsTestApp>>;
