import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assembleSystemPrompt } from './agents.prompt.js';

test('assembleSystemPrompt joins the non-blank parts in order under headings', () => {
  assert.equal(assembleSystemPrompt({}), '');
  assert.equal(
    assembleSystemPrompt({ knowledgeBase: 'Prices: $10.', soul: '  Friendly.\n', mission: '   ', faq: null }),
    '## Personality\nFriendly.\n\n## Knowledge base\nPrices: $10.',
  );
});
