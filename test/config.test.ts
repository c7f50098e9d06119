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

test('every number setting is plain decimal digits within its range, or the start stops', () => {
  const refused: Array<[Record<string, string>, RegExp]> = [
    // Once read as 0: the simulation silently off.
    [{ SIM_AGENT_LATE_START_RATE: 'abc' }, /^SIM_AGENT_LATE_START_RATE must be a number >= 0, got "abc"$/],
    [{ SIM_AGENT_LATE_START_RATE: '1.5' }, /^SIM_AGENT_LATE_START_RATE must be at most 1, got "1.5"$/],
    // Once accepted, then a stack when the server listened.
    [{ PORT: '70000' }, /^PORT must be at most 65535, got "70000"$/],
    // Once read as other numbers than the one meant.
    [{ RATE_LIMIT_PER_MINUTE: '0x10' }, /^RATE_LIMIT_PER_MINUTE must be an integer >= 1, got "0x10"$/],
    [{ SHUTDOWN_GRACE_MS: '1e3' }, /^SHUTDOWN_GRACE_MS must be an integer >= 0, got "1e3"$/],
    [{ DATABASE_POOL_SIZE: ' 5' }, /^DATABASE_POOL_SIZE must be an integer >= 1, got " 5"$/],
    [{ CAMPAIGN_TICK_SECONDS: '.5' }, /^CAMPAIGN_TICK_SECONDS must be a number >= 0.1, got ".5"$/],
    [{ PDF_MAX_SECONDS: 'Infinity' }, /^PDF_MAX_SECONDS must be a number >= 1, got "Infinity"$/],
    [{ CALLS_MAX_DURATION_SECONDS: '10801' }, /^CALLS_MAX_DURATION_SECONDS must be at most 10800, got "10801"$/],
  ];
  for (const [env, message] of refused) {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
      JSON.stringify(env),
    );
  }
  const config = loadConfig({
    PORT: '65535',
    SIM_AGENT_LATE_START_RATE: '0.25',
    CAMPAIGN_TICK_SECONDS: '0.5',
    CALLS_MAX_DURATION_SECONDS: '10800',
  });
  assert.equal(config.port, 65_535);
  assert.equal(config.calls.simLateStartRate, 0.25);
  assert.equal(config.campaigns.tickSeconds, 0.5);
  assert.equal(config.calls.maxDurationSeconds, 10_800);
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
