import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunkKnowledge } from './knowledge.chunker.js';
import { searchConfigOf } from './knowledge.service.js';

test('chunks: on headings, about 500 tokens each, overlapping within a section', () => {
  const section = Array.from(
    { length: 60 },
    (_, i) => `Sentence number ${i} talks about topic ${i % 7} in some detail here.`,
  ).join(' ');
  const chunks = chunkKnowledge(`# Intro\nShort intro.\n\n# Big\n## Part\n${section}\n\n${section}\n\n# End\nBye.`);
  assert.deepEqual([...new Set(chunks.map((c) => c.heading))], ['Intro', 'Big > Part', 'End']);
  const big = chunks.filter((c) => c.heading === 'Big > Part');
  assert.ok(big.length >= 2);
  for (const chunk of big) assert.ok(chunk.tokens <= 520, `${chunk.tokens} tokens`);
  const tailOfFirst = big[0]!.content.slice(-80);
  assert.ok(
    big[1]!.content.includes(tailOfFirst.slice(tailOfFirst.indexOf(' ') + 1)),
    'the next chunk repeats the end of the previous one',
  );
  assert.deepEqual(
    chunks.map((c) => c.seq),
    chunks.map((_, i) => i),
  );
});

test('the search language comes from the voice: its first part, or simple (no stemming) when unknown', () => {
  const cases: Array<[string | null, string]> = [
    ['en-us', 'english'],
    ['de+f3', 'german'],
    ['pt_BR', 'portuguese'],
    ['FR', 'french'],
    ['xx-yy', 'simple'],
    ['english', 'simple'],
    [null, 'simple'],
  ];
  for (const [voice, config] of cases) assert.equal(searchConfigOf(voice), config, String(voice));
});
