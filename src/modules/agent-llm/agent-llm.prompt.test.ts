import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProviderError } from '../../providers/provider-error.js';
import { agentScriptOf, knowledgeQueryOf, turnSystemPrompt, upstreamError } from './agent-llm.prompt.js';

const parts = {
  soul: 'Friendly.',
  mission: 'Book a demo.',
  playbook: '',
  examples: '',
  objections: '',
  closers: '',
  notes: '',
  faq: '',
  knowledgeBase: 'The whole handbook.',
  firstMessage: 'Hi!',
};
const chunk = (heading: string, content: string) => ({ id: heading, seq: 0, heading, content, tokens: 1, score: 1 });

test('the turn prompt: the parts without the knowledge base, then the chunks of the turn under their headings', () => {
  assert.equal(turnSystemPrompt({ parts }, []), '## Personality\nFriendly.\n\n## Mission\nBook a demo.');
  assert.equal(
    turnSystemPrompt({ parts }, [chunk('Plans', 'Pro: $10.'), chunk('', 'Open 9 to 5.')]),
    '## Personality\nFriendly.\n\n## Mission\nBook a demo.\n\n## Knowledge base\n### Plans\nPro: $10.\n\nOpen 9 to 5.',
  );
  assert.equal(turnSystemPrompt({ parts }, [chunk('A', 'b')], ''), '## Knowledge base\n### A\nb', 'nothing else');
});

test('the playbook script: the voicemail message only when one is left, the transfer rule only with a number', () => {
  const cases = [
    {
      voicemail: { action: 'leave_message' as const, message: 'Call us.' },
      transfer: { number: null, whenToTransfer: 'x' },
    },
    {
      voicemail: { action: 'hang_up' as const, message: 'Call us.' },
      transfer: { number: '+14155550100', whenToTransfer: '' },
    },
    {
      voicemail: { action: 'hang_up' as const, message: '' },
      transfer: { number: '+14155550100', whenToTransfer: 'angry' },
    },
  ];
  const expected = [
    ['Call us.', null],
    ['', 'when they ask to speak to a person'],
    ['', 'angry'],
  ];
  cases.forEach((settings, i) => {
    const script = agentScriptOf({ parts, ...settings });
    assert.deepEqual([script.voicemailMessage, script.whenToTransfer], expected[i], `case ${i}`);
    assert.equal(script.mission, 'Book a demo.');
  });
});

test("knowledge is looked up by the caller's last words, and not at all without a knowledge base or words", () => {
  const said = [
    { role: 'user' as const, content: 'first' },
    { role: 'assistant' as const, content: 'answer' },
    { role: 'user' as const, content: 'What does Pro cost?' },
  ];
  assert.equal(knowledgeQueryOf({ parts }, said), 'What does Pro cost?');
  assert.equal(knowledgeQueryOf({ parts: { ...parts, knowledgeBase: '  ' } }, said), '');
  assert.equal(knowledgeQueryOf({ parts }, [{ role: 'user', content: '   ' }]), '');
  assert.equal(knowledgeQueryOf({ parts }, [{ role: 'system', content: 'rules' }]), '');
});

test("an upstream failure names what went wrong, never the upstream's address", () => {
  const cases: Array<[ProviderError, string, number | undefined]> = [
    [new ProviderError('openai', 'timeout', 'POST http://10.0.0.5/v1 timed out'), 'did not answer in time', undefined],
    [new ProviderError('openai', 'network', 'ECONNREFUSED 10.0.0.5'), 'could not be reached', undefined],
    [new ProviderError('openai', 'upstream_error', 'POST http://10.0.0.5/v1 answered 429', 429), 'answered 429', 429],
  ];
  for (const [error, reason, status] of cases) {
    const answer = upstreamError('gpt-x', error);
    assert.equal(answer.code, 'upstream_error');
    assert.equal(answer.message, `The agent's model (gpt-x) ${reason}`);
    assert.doesNotMatch(answer.message, /10\.0\.0\.5/);
    assert.equal(answer.details.upstreamStatus, status);
  }
});
