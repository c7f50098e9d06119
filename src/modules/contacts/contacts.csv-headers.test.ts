/** How a file's header row maps cells to a contact's fields and attributes (no database). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapHeaders } from './contacts.csv-headers.js';

test('columns headed __proto__ or constructor are attributes like any other, and touch no prototype', () => {
  const mapper = mapHeaders(['phone', '__proto__', 'constructor', 'Stage']);
  const row = mapper.map(['+14155552671', 'x', 'y', 'lead']);
  assert.deepEqual(Object.entries(row.attributes!), [
    ['__proto__', 'x'],
    ['constructor', 'y'],
    ['Stage', 'lead'],
  ]);
  assert.equal(JSON.stringify(row.attributes), '{"__proto__":"x","constructor":"y","Stage":"lead"}');
  assert.equal(Object.getPrototypeOf(Object.prototype), null);
  assert.equal((Object.prototype as Record<string, unknown>).x, undefined);
});
