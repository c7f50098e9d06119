/**
 * The API key format, without an app or a database: "va_", 30 random base62 characters and a 6-character checksum
 * that refuses typos before any lookup.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { displayPrefix, generateApiKey, isWellFormedApiKey } from './api-keys.format.js';

test('a generated key is va_ + 36 base62 characters, well-formed, and new every time', () => {
  const keys = Array.from({ length: 50 }, generateApiKey);
  for (const key of keys) {
    assert.match(key, /^va_[0-9A-Za-z]{36}$/);
    assert.equal(isWellFormedApiKey(key), true, key);
  }
  assert.equal(new Set(keys).size, keys.length);
});

test('isWellFormedApiKey: a wrong prefix, length, alphabet or checksum is refused', () => {
  const key = generateApiKey();
  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'a' ? 'b' : 'a') + text.slice(at + 1);
  const cases: [string, string][] = [
    ['a typo in the random part', flip(key, 5)],
    ['a typo in the checksum', flip(key, key.length - 1)],
    ['another prefix', `vb_${key.slice(3)}`],
    ['no prefix', key.slice(3)],
    ['one character short', key.slice(0, -1)],
    ['one character long', `${key}a`],
    ['not base62', `${key.slice(0, 10)}-${key.slice(11)}`],
    ['the right shape, no checksum', `va_${'x'.repeat(36)}`],
    ['empty', ''],
  ];
  for (const [name, candidate] of cases) assert.equal(isWellFormedApiKey(candidate), false, name);
});

test('displayPrefix: "va_" and the first 6 random characters', () => {
  assert.equal(displayPrefix('va_AbC123xyz0000000000000000000000000000'), 'va_AbC123');
});
