import { test } from 'node:test';
import assert from 'node:assert/strict';
import { phoneColumns, stagingJson } from './staging.js';

test('phone columns are found by any common header, best first', () => {
  assert.deepEqual(phoneColumns(['Name', 'Mobile Phone', 'Phone Number']), [2, 1]);
  assert.deepEqual(phoneColumns(['Phone 1 - Value', 'TEL']), [0, 1]);
  assert.deepEqual(phoneColumns(['telefon', 'email']), [0]);
  assert.deepEqual(phoneColumns(['name', 'email']), []);
});

test('staging JSON turns a lone surrogate into U+FFFD and refuses a NUL', () => {
  assert.equal(stagingJson([{ a: 'ok \\u0041' }]), '[{"a":"ok \\\\u0041"}]');
  assert.equal(JSON.parse(stagingJson([{ a: 'x\ud800y' }]))[0].a, 'x\ufffdy');
  assert.equal(JSON.parse(stagingJson([{ a: '😀' }]))[0].a, '😀');
  assert.throws(() => stagingJson([{ a: 'x\u0000' }]), /NUL/);
});
