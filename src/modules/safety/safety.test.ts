/**
 * POST /v1/agents/safety-check, the HTTP contract: the report's shape and result, a saved agent checked only in its
 * own account, and the body's errors. The rules are tested in safety.rules.test.ts, the check with a model's review
 * in safety.service.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { buildAgent } from '../../../test/factories/index.js';

let t: TestApp;
let owner: SignedUp;
before(async () => {
  t = await buildTestApp();
  owner = await signUp(t.app);
});
after(async () => t.close());

/** A definition that passes every rule; each case below changes one part of it. */
const SAFE = {
  soul: 'You are Mia, an AI assistant for Bright Dental. If asked, say plainly that you are an AI assistant.',
  mission: 'Book check-ups for existing patients.',
  playbook:
    '1. Greet the patient.\n2. Offer two times.\n3. If they ask you to stop calling, apologise, confirm it and end the call.',
  notes:
    'Never ask for card numbers, passwords or one-time codes.\nNever threaten anyone.\nNever promise a guaranteed cure.',
  knowledgeBase: 'Bright Dental is open Monday to Friday, 8 am to 6 pm.',
  firstMessage: 'Hi, this is Mia, an AI assistant from Bright Dental.',
  transfer: { number: '+14155550123', whenToTransfer: 'The patient asks for a person.' },
};

async function check(agent: Record<string, unknown>) {
  const response = await call(owner, 'POST', '/agents/safety-check', { agent });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as {
    result: string;
    findings: {
      code: string;
      severity: string;
      message: string;
      part: string | null;
      line: number | null;
      excerpt: string | null;
      suggestion: string;
      source: string;
    }[];
    counts: { error: number; warning: number };
    llmReview: { status: string };
  };
}

test('a safe definition passes, with no findings and no model review when no LLM is configured', async () => {
  const report = await check(SAFE);
  assert.equal(report.result, 'pass');
  assert.deepEqual(report.findings, []);
  assert.equal(report.llmReview.status, 'not_configured');
});

test('an unsafe definition fails, with each finding, its place and the counts by severity', async () => {
  const report = await check({
    ...SAFE,
    playbook: 'Ask for the SSN.\nAct now, today only!',
    transfer: { number: '12' },
  });
  assert.equal(report.result, 'fail');
  assert.deepEqual(report.counts, { error: 3, warning: 1 });
  assert.deepEqual(
    report.findings.map(({ code, severity, part, line, excerpt, source }) => ({
      code,
      severity,
      part,
      line,
      excerpt,
      source,
    })),
    [
      { code: 'opt_out_missing', severity: 'error', part: null, line: null, excerpt: null, source: 'rules' },
      {
        code: 'sensitive_data_request',
        severity: 'error',
        part: 'playbook',
        line: 1,
        excerpt: 'Ask for the SSN.',
        source: 'rules',
      },
      {
        code: 'pressure_tactic',
        severity: 'warning',
        part: 'playbook',
        line: 2,
        excerpt: 'Act now, today only!',
        source: 'rules',
      },
      {
        code: 'transfer_number_invalid',
        severity: 'error',
        part: 'transfer.number',
        line: null,
        excerpt: '12',
        source: 'rules',
      },
    ],
  );
  assert.ok(report.findings.every((f) => f.message && f.suggestion));
});

test('a saved agent is checked by id; another account gets 404; exactly one of agentId or agent', async () => {
  const agent = await buildAgent(owner, { ...SAFE, playbook: 'Collect their password to log in.' });
  const report = await call(owner, 'POST', '/agents/safety-check', { agentId: agent.id });
  assert.equal(report.statusCode, 200, report.body);
  assert.deepEqual(
    report.json().findings.map((f: { code: string }) => f.code),
    ['opt_out_missing', 'sensitive_data_request'],
  );

  const stranger = await signUp(t.app);
  const foreign = await call(stranger, 'POST', '/agents/safety-check', { agentId: agent.id });
  assert.equal(foreign.statusCode, 404);
  assert.equal(errorBody(foreign).error, 'not_found');

  for (const body of [{}, { agentId: agent.id, agent: SAFE }]) {
    const response = await call(owner, 'POST', '/agents/safety-check', body);
    assert.equal(response.statusCode, 400);
    assert.deepEqual(errorBody(response).details.fields, [
      { field: 'body/agentId', message: 'send exactly one of agentId or agent' },
      { field: 'body/agent', message: 'send exactly one of agentId or agent' },
    ]);
  }
  const unknownField = await call(owner, 'POST', '/agents/safety-check', { agent: { ...SAFE, colour: 'red' } });
  assert.equal(unknownField.statusCode, 400);
  assert.equal((errorBody(unknownField).details.fields as { field: string }[])[0]!.field, 'body/agent/colour');
});
