/**
 * The systemd units in deploy/systemd, read as systemd would: what each process may write, and where the
 * configuration sends its data and recordings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { loadConfig } from '../src/config.js';
import { ROOT } from './process-kit.js';

const UNITS = join(ROOT, 'deploy/systemd');

/** The [Service] settings of a unit: each key's values in order (Environment= and ReadWritePaths= repeat). */
function serviceSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      section = line;
      continue;
    }
    if (section !== '[Service]') continue;
    const equals = line.indexOf('=');
    const key = line.slice(0, equals);
    settings.set(key, [...(settings.get(key) ?? []), line.slice(equals + 1)]);
  }
  return settings;
}

const under = (path: string, directory: string) => path === directory || path.startsWith(directory + sep);

test('each unit may write where its data and recordings go (ProtectSystem=strict makes the rest read-only)', () => {
  const units = readdirSync(UNITS).filter((name) => name.endsWith('.service'));
  assert.ok(units.length >= 2, units.join(', '));
  for (const unit of units) {
    const settings = serviceSettings(readFileSync(join(UNITS, unit), 'utf8'));
    assert.equal(settings.get('ProtectSystem')?.at(-1), 'strict', `${unit}: the file system is read-only but for…`);
    const writable = [
      ...(settings.get('ReadWritePaths') ?? []).flatMap((value) => value.split(/\s+/)),
      ...(settings.get('StateDirectory') ?? [])
        .flatMap((value) => value.split(/\s+/))
        .map((name) => `/var/lib/${name}`),
    ];
    const env = Object.fromEntries(
      (settings.get('Environment') ?? [])
        .flatMap((value) => value.split(/\s+/))
        .map((assignment) => assignment.split('=', 2) as [string, string]),
    );
    const workingDirectory = settings.get('WorkingDirectory')?.at(-1) ?? '/';
    const config = loadConfig(env);
    const absolute = (path: string) => (isAbsolute(path) ? path : resolve(workingDirectory, path));
    assert.equal(config.storage.driver, 'local');
    const places = { DATA_DIR: absolute(config.dataDir), STORAGE_DIR: absolute(config.storage.dir ?? '') };
    for (const [setting, path] of Object.entries(places)) {
      assert.ok(
        writable.some((directory) => under(path, directory)),
        `${unit}: ${setting} ${path} is not under a writable path (${writable.join(', ')})`,
      );
    }
  }
});
