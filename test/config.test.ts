/**
 * The configuration's rules, without starting anything: what a bad setting is told, and how `.env` joins the
 * environment. That a start with a bad setting exits 2 with the message on one line is test/first-run.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, loadDotEnv } from '../src/config.js';

test('a bad setting is refused with its name, what it may be, and what it got', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"$/],
    [{ PORT: 'eighty' }, /^PORT must be an integer >= 0, got "eighty"$/],
    [{ PORT: '-1' }, /^PORT must be an integer >= 0, got "-1"$/],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
      JSON.stringify(env),
    );
  }
  assert.equal(loadConfig({ PORT: '0', LOG_LEVEL: '' }).port, 0, 'empty is unset');
});

test('.env is read into the environment, and variables already set win', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-dotenv-'));
  const names = ['PARLEY_TEST_FROM_FILE', 'PARLEY_TEST_SET_BEFORE', 'PARLEY_TEST_COMMENTED'] as const;
  try {
    const path = join(dir, '.env');
    writeFileSync(
      path,
      '# settings of this machine\nPARLEY_TEST_FROM_FILE=file # a comment\nPARLEY_TEST_SET_BEFORE=file\n# PARLEY_TEST_COMMENTED=file\n',
    );
    process.env.PARLEY_TEST_SET_BEFORE = 'environment';
    assert.equal(loadDotEnv(path), path);
    assert.equal(process.env.PARLEY_TEST_FROM_FILE, 'file');
    assert.equal(process.env.PARLEY_TEST_SET_BEFORE, 'environment');
    assert.equal(process.env.PARLEY_TEST_COMMENTED, undefined);
    assert.equal(loadDotEnv(join(dir, 'missing.env')), null, 'no file, nothing read');
  } finally {
    for (const name of names) delete process.env[name];
    rmSync(dir, { recursive: true, force: true });
  }
});
