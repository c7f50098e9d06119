/**
 * The dashboard builds against the API as it is: its client types are generated from the API document and the
 * pages typecheck against them, so a route or field renamed on the server fails here with the compiler's report.
 * A no-op when web/dist/ was built from the same sources (npm install builds it); runs without a browser.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PGLITE_PASS_ONLY, ROOT } from '../process-kit.js';

test('the dashboard typechecks against the generated API client and bundles', { skip: PGLITE_PASS_ONLY }, () => {
  const result = spawnSync(process.execPath, ['scripts/web.mjs', 'ensure'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
});
