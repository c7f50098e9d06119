/**
 * What the system service tells clients before they sign in, from the configuration it is given, and what health
 * reports of the dependencies.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { systemClock } from '../../lib/clock.js';
import { createLocalStorage } from '../../providers/storage/index.js';
import { buildTestServices } from '../../../test/service-kit.js';
import { createSystemService } from './system.service.js';

/** The service on a configuration alone: public config reads nothing else. */
function systemOn(env: Record<string, string>) {
  return createSystemService({
    db: null as never,
    redis: null,
    config: loadConfig({ DATA_DIR: ':memory:', ...env }),
    clock: systemClock,
    databaseKind: 'pglite',
    objects: createLocalStorage({ dir: tmpdir() }),
  });
}

test('public config says sign-up is open only when REGISTRATION is open', () => {
  const cases: Array<[Record<string, string>, boolean]> = [
    [{}, true],
    [{ REGISTRATION: 'open' }, true],
    [{ REGISTRATION: 'invite' }, false],
    [{ REGISTRATION: 'closed' }, false],
  ];
  for (const [env, open] of cases) {
    assert.equal(systemOn(env).publicConfig().auth.registrationOpen, open, JSON.stringify(env));
  }
});

test('public config gives the limits this server applies', () => {
  const { limits } = systemOn({ RATE_LIMIT_PER_MINUTE: '42', ANON_RATE_LIMIT_PER_MINUTE: '7' }).publicConfig();
  assert.equal(limits.requestsPerMinutePerKey, 42);
  assert.equal(limits.anonymousRequestsPerMinutePerIp, 7);
});

test('health reports object storage, and is down when recordings could not be stored', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'parley-health-'));
  const objects = join(scratch, 'objects');
  const t = await buildTestServices({ env: { STORAGE_DIR: objects } });
  try {
    const healthy = await t.services.system.health();
    assert.equal(healthy.healthy, true);
    assert.deepEqual(
      { status: healthy.body.status, database: healthy.body.database, objectStorage: healthy.body.objectStorage },
      { status: 'ok', database: 'ok', objectStorage: 'ok' },
    );

    // The directory gone and a file in its place: every recording would be lost.
    rmSync(objects, { recursive: true, force: true });
    writeFileSync(objects, 'not a directory');
    const down = await t.services.system.health();
    assert.equal(down.healthy, false);
    assert.equal(down.body.status, 'down');
    assert.equal(down.body.objectStorage, 'down');
    assert.equal(down.body.database, 'ok');
    const status = await t.services.system.publicStatus();
    assert.equal(status.status, 'degraded');
    assert.deepEqual(
      status.components.find((component) => component.name === 'object_storage'),
      { name: 'object_storage', status: 'down' },
    );
  } finally {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  }
});
