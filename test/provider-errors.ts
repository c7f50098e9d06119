import assert from 'node:assert/strict';
import { isProviderError, type ProviderError } from '../src/providers/provider-error.js';

/** The ProviderError `promise` fails with; the test fails if it succeeds or fails with anything else. */
export async function providerErrorOf(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isProviderError(error), `expected a ProviderError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a ProviderError, but it succeeded');
}
