/**
 * Test data factories: buildX(scope, overrides) makes an X with sensible defaults, in the account of the
 * signed-in caller given, or of a test app's new owner (or `overrides.accountId`), and answers it.
 */
export { buildAgent, insertAgent, DEFAULT_AGENT_NAME } from './agents.js';
export { buildContact, insertContact } from './contacts.js';
export {
  buildCall,
  insertCall,
  DEFAULT_COST_ITEMS,
  DEFAULT_TRANSCRIPT,
  type SeedCall,
  type SeededCall,
} from './calls.js';
export type { Scope } from './scope.js';
