import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES } from '../src/lib/errors.js';
import { permissionTable } from '../src/lib/permissions.js';

// The README's tables are written by hand; these checks keep them from drifting from the code.
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

test('the README error table lists every error code with its status', () => {
  for (const [code, { status }] of Object.entries(ERROR_CODES)) {
    assert.ok(readme.includes(`| \`${code}\` | ${status} |`), `README lists ${code} as ${status}`);
  }
});

test('the README configuration table lists every variable config.ts reads', () => {
  const source = readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8');
  // `env.NAME` or a helper's `(env, 'NAME')`; names may hold digits (S3_BUCKET).
  const names = new Set(
    [...source.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)\b|, '([A-Z][A-Z0-9_]+)')/g)].map((m) => (m[1] ?? m[2])!),
  );
  assert.ok(names.size >= 10);
  assert.ok(names.has('S3_BUCKET') && names.has('DATABASE_URL'), 'the pattern sees every kind of name');
  for (const name of names) assert.ok(readme.includes(`| \`${name}\` |`), `README documents ${name}`);
});

test('the README opens with the two set-up commands', () => {
  assert.ok(readme.includes('npm install && npm start'));
  assert.ok(readme.includes('npm test'));
});

test('the README permission table is the one in src/lib/permissions.ts', () => {
  assert.ok(readme.includes(permissionTable()), 'regenerate it with permissionTable()');
});
