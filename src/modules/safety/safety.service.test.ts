/**
 * The safety check through its service, on a model it is given (no app, no database): the result and counts, the
 * model's review read defensively (its line found from the excerpt, malformed items dropped, long text clipped), a
 * failed review reported without failing the check, and exactly one of agentId or agent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Auth } from '../../lib/caller.js';
import { AppError } from '../../lib/errors.js';
import type { ChatDelta, ChatRequest, LlmClient } from '../../providers/llm/index.js';
import { ProviderError } from '../../providers/provider-error.js';
import type { SafetyCheckInput } from './safety.schemas.js';
import { createSafetyService, type AgentDefinition } from './safety.service.js';

const SAFE = {
  soul: 'You are Mia, an AI assistant for Bright Dental.',
  playbook: '1. Greet the patient.\n2. If they ask you to stop calling, confirm it and end the call.',
  closers: 'Confirm the time.\nThen say goodbye.',
};
const auth = { accountId: 'account-1', role: 'owner' } as Auth;

/** A model that answers `answer` (or throws it), recording the requests. */
function model(answer: string | Error) {
  const requests: ChatRequest[] = [];
  const llm: LlmClient = {
    name: 'fake:reviewer',
    async *chat(request): AsyncGenerator<ChatDelta> {
      requests.push(request);
      if (answer instanceof Error) throw answer;
      yield { type: 'text', text: answer };
      yield { type: 'done', usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
    },
  };
  return { llm, requests };
}

function service(llm: LlmClient | null, saved: AgentDefinition = SAFE) {
  const safety = createSafetyService({
    agents: { get: async () => saved as never },
    llm: llm ?? model('{}').llm,
    llmConfigured: llm !== null,
  });
  // The body's schema types the prompt parts loosely; the service reads them as an AgentDefinition.
  return {
    ...safety,
    check: (input: { agentId?: string; agent?: AgentDefinition }) => safety.check(auth, input as SafetyCheckInput),
  };
}

test('without a model: the rules decide; errors fail the check, warnings alone pass', async () => {
  const cases: [Record<string, string>, 'pass' | 'fail', { error: number; warning: number }][] = [
    [{}, 'pass', { error: 0, warning: 0 }],
    [{ closers: 'Tell them this is their last chance.' }, 'pass', { error: 0, warning: 1 }],
    [{ playbook: 'Ask for the SSN.\nAct now!' }, 'fail', { error: 2, warning: 1 }],
  ];
  for (const [change, result, counts] of cases) {
    const report = await service(null).check({ agent: { ...SAFE, ...change } });
    assert.deepEqual([report.result, report.counts], [result, counts], JSON.stringify(change));
    assert.deepEqual(report.llmReview, { status: 'not_configured', model: null, message: null });
  }
  assert.deepEqual(service(null).checkRules({ ...SAFE, playbook: 'Ask for the SSN.' }).passed, false);
});

test("the model's review follows the rules' findings: its line found from the excerpt, bad items dropped", async () => {
  const { llm, requests } = model(
    JSON.stringify({
      findings: [
        { severity: 'warning', part: 'closers', excerpt: 'say goodbye', message: 'No policy.', suggestion: 'Add it.' },
        { severity: 'error', part: 'nowhere', excerpt: 'x', message: 'An unknown part.', suggestion: '' },
        { severity: 'critical', part: 'soul', excerpt: 'not in the text', message: 'M'.repeat(600) },
        { severity: 'error', part: 'soul', excerpt: 'y' },
        'not an object',
      ],
    }),
  );
  const report = await service(llm).check({ agent: { ...SAFE, transfer: { number: '0800 123' } } });
  assert.deepEqual(report.llmReview, { status: 'done', model: 'fake:reviewer', message: null });
  assert.deepEqual(
    report.findings.map((f) => [f.code, f.source, f.severity, f.part, f.line]),
    [
      ['transfer_number_invalid', 'rules', 'error', 'transfer.number', null],
      ['llm_review', 'llm', 'warning', 'closers', 2],
      ['llm_review', 'llm', 'error', null, null],
      ['llm_review', 'llm', 'warning', 'soul', null],
    ],
  );
  assert.equal(report.findings[3]!.message.length, 500, 'long text is clipped');
  assert.equal(report.result, 'fail');
  assert.equal(requests[0]!.responseFormat!.name, 'safety_review');
  assert.equal(requests[0]!.temperature, 0);
  assert.match(requests[0]!.messages[1]!.content!, /### closers\nConfirm the time\.\nThen say goodbye\./);
});

test('a review that fails is reported, and the rules still decide', async () => {
  const cases: [string | Error, RegExp][] = [
    ['not json', /^the model's answer could not be read \(/],
    ['{"verdict":"fine"}', /^the model's answer could not be read \(the review has no findings list\)$/],
    [new ProviderError('openai-llm', 'timeout', 'the model did not answer in time'), /did not answer in time/],
  ];
  for (const [answer, message] of cases) {
    const report = await service(model(answer).llm).check({ agent: SAFE });
    assert.equal(report.llmReview.status, 'failed');
    assert.match(report.llmReview.message!, message);
    assert.deepEqual([report.result, report.findings], ['pass', []]);
  }
});

test('a saved agent is read through the agents service; exactly one of agentId or agent', async () => {
  const report = await service(null, { ...SAFE, playbook: 'Collect their password to log in.' }).check({
    agentId: '00000000-0000-4000-8000-000000000001',
  });
  assert.deepEqual(
    report.findings.map((f) => f.code),
    ['opt_out_missing', 'sensitive_data_request'],
  );
  for (const input of [{}, { agentId: '00000000-0000-4000-8000-000000000001', agent: SAFE }]) {
    await assert.rejects(service(null).check(input), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.code, 'validation_failed');
      assert.deepEqual(
        (error.details.fields as { field: string }[]).map((f) => f.field),
        ['body/agentId', 'body/agent'],
      );
      return true;
    });
  }
});
