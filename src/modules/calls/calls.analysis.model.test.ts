import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeTranscript, type AnalysisInput } from './calls.analysis.extractor.js';
import { analysisRequest, readModelAnalysis } from './calls.analysis.model.js';

const input: AnalysisInput = {
  transcript: [
    { speaker: 'agent', text: 'Do you have a minute?' },
    { speaker: 'caller', text: 'Call me back tomorrow after 3, please.' },
  ],
  direction: 'outbound',
  endReason: 'agent_hangup',
  disposition: 'callback_requested',
  dispositionCategory: 'neutral',
  durationSeconds: 12,
  endedAt: new Date('2026-03-02T15:00:00.000Z'),
  agentName: 'Sales Sally',
  mission: 'Book a demo.',
  fields: [{ name: 'budget', type: 'number', description: 'The monthly budget' }],
  contactFirstName: 'Ada',
  timeZone: 'America/New_York',
};
const fallback = analyzeTranscript(input);

test('the request: the transcript, the local time and the fields, with a strict schema', () => {
  const request = analysisRequest(input);
  assert.equal(request.responseFormat?.name, 'call_analysis');
  const user = request.messages[1]!.content as string;
  assert.match(user, /Person: Call me back tomorrow after 3, please\./);
  assert.match(user, /2026-03-02 10:00 \(Monday\), time zone America\/New_York/);
  const schema = request.responseFormat!.schema as { required: string[]; properties: Record<string, any> };
  assert.deepEqual(schema.required, Object.keys(schema.properties));
  assert.deepEqual(schema.properties.fields.required, ['budget']);
});

test('the answer: read in a code fence, odd values replaced by the extractor’s, a callback time in the past refused', () => {
  const answer = {
    summary: ' Ada asked for a callback. ',
    outcome: 'maybe',
    missionSucceeded: 'no',
    missionReason: 'Busy.',
    nextSteps: ['Call back.', 42],
    callback: { asked: 'tomorrow after 3', localTime: '2026-03-03T15:00' },
    fields: { budget: 'about a lot' },
  };
  const read = readModelAnalysis(`\`\`\`json\n${JSON.stringify(answer)}\n\`\`\``, input, fallback);
  assert.equal(read.summary, 'Ada asked for a callback.');
  assert.equal(read.outcome, fallback.outcome);
  assert.equal(read.missionSucceeded, fallback.missionSucceeded);
  assert.deepEqual(read.nextSteps, ['Call back.']);
  assert.deepEqual(read.callback, { asked: 'tomorrow after 3', at: new Date('2026-03-03T20:00:00.000Z') });
  assert.deepEqual(read.fields, { budget: null });
  const past = readModelAnalysis(
    JSON.stringify({ ...answer, callback: { asked: 'this morning', localTime: '2026-03-02T09:00' } }),
    input,
    fallback,
  );
  assert.deepEqual(past.callback, { asked: 'this morning', at: null });
  assert.equal(readModelAnalysis(JSON.stringify({ ...answer, callback: null }), input, fallback).callback, null);
  assert.throws(() => readModelAnalysis('Here is the analysis: fine.', input, fallback));
  assert.throws(() => readModelAnalysis(JSON.stringify({ outcome: 'interested' }), input, fallback), /no summary/);
});
