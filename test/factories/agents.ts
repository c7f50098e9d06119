import assert from 'node:assert/strict';
import type { Db } from '../../src/db/client.js';
import { newId } from '../../src/lib/ids.js';
import { call, type Caller, type TestApp } from '../helpers.js';
import { isTestApp, resolveScope } from './scope.js';

export const DEFAULT_AGENT_NAME = 'Sales agent';

/** An agent with defaults for everything but its name; the agents module owns the table. */
export async function insertAgent(db: Db, accountId: string, input: { name: string }) {
  const id = newId();
  await db.insertInto('agents').values({ id, account_id: accountId, name: input.name }).execute();
  return { id, ...input };
}

/**
 * An agent. Given someone signed in, it is created through POST /v1/agents as them (so their role counts),
 * with `overrides` as the request body, and answers the API's agent. Given a test app, a bare row (defaults
 * for everything but the name) is written straight to the database, for tests of other modules that only
 * need an agent to exist; it answers { id, name, accountId }.
 */
export async function buildAgent(who: Caller, overrides?: Record<string, unknown>): Promise<Record<string, any>>;
export async function buildAgent(
  testApp: TestApp,
  overrides?: { accountId?: string; name?: string },
): Promise<{ id: string; name: string; accountId: string }>;
export async function buildAgent(scope: TestApp | Caller, overrides: Record<string, any> = {}): Promise<any> {
  if (!isTestApp(scope)) {
    const response = await call(scope, 'POST', '/agents', { name: DEFAULT_AGENT_NAME, ...overrides });
    assert.equal(response.statusCode, 200, response.body);
    return response.json();
  }
  const { testApp, accountId } = await resolveScope(scope, overrides.accountId);
  const agent = await insertAgent(testApp.infra.database.db, accountId, {
    name: (overrides.name as string | undefined) ?? DEFAULT_AGENT_NAME,
  });
  return { ...agent, accountId };
}
