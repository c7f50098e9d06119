import { signUp, testAppOf, type Caller, type TestApp } from '../helpers.js';

/**
 * Where a factory writes: a test app (the account is `accountId`, or a newly signed-up owner's), or someone
 * signed in to one (a signed-up user, or asRole's member), whose account it is.
 */
export type Scope = TestApp | (Caller & { accountId: string });

export const isTestApp = (scope: TestApp | Caller): scope is TestApp => 'infra' in scope;

/** The test app and the account a factory writes to. */
export async function resolveScope(scope: Scope, accountId?: string): Promise<{ testApp: TestApp; accountId: string }> {
  const testApp = isTestApp(scope) ? scope : testAppOf(scope.app);
  const account = accountId ?? (isTestApp(scope) ? (await signUp(testApp.app)).accountId : scope.accountId);
  return { testApp, accountId: account };
}
