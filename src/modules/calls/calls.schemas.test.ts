import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { envelope } from '../../db/pagination.js';
import { CallList, serializeCallList } from './calls.schemas.js';
import { toCallItem } from './calls.views.js';

/** The serializer Fastify compiles from the route's response schema. */
const compiled = SerializerSelector()({}, {})({
  schema: CallList,
  method: 'GET',
  url: '/calls',
  httpStatus: '200',
}) as (data: unknown) => string;

/** A list row as the repo answers it: the call's columns and the contact's and agent's names. */
const answered: Parameters<typeof toCallItem>[0] = {
  id: '00000000-0000-4000-8000-000000000001',
  contact_id: '00000000-0000-4000-8000-000000000002',
  contact_first_name: 'Zoë "Z" O\'Brien\\',
  contact_last_name: 'tab\there, line\nbreak, nul\u0000, emoji 😀, lone \ud800 surrogate, \u2028',
  from_number: '+14155550000',
  to_number: '+14155550123',
  agent_id: '00000000-0000-4000-8000-000000000003',
  agent_name: 'Agent </script>',
  direction: 'outbound',
  status: 'completed',
  disposition: 'booked',
  duration_seconds: 95,
  total_cost_usd: '0.137500',
  recording_storage_key: 'recordings/a/1.wav',
  started_at: new Date('2026-11-25T06:25:38.123Z'),
  ended_at: new Date('2026-11-25T06:27:13.999Z'),
  created_at: new Date('2026-11-25T06:25:37.000Z'),
};

const unanswered: Parameters<typeof toCallItem>[0] = {
  ...answered,
  id: '00000000-0000-4000-8000-000000000004',
  contact_id: null,
  contact_first_name: null,
  contact_last_name: null,
  from_number: null,
  agent_id: null,
  agent_name: null,
  direction: 'inbound',
  status: 'queued',
  disposition: null,
  duration_seconds: null,
  total_cost_usd: '0',
  recording_storage_key: null,
  started_at: null,
  ended_at: null,
};

test('the calls list is written exactly as the schema serializer writes it', () => {
  const pages = [
    envelope('calls', [], 0, { limit: 25, offset: 0 }),
    envelope('calls', [answered].map(toCallItem), 1, { limit: 1, offset: 0 }),
    envelope('calls', [answered, unanswered, { ...answered, duration_seconds: 0 }].map(toCallItem), 1_000_000, {
      limit: 3,
      offset: 500,
    }),
  ];
  for (const page of pages) {
    assert.equal(serializeCallList(page), compiled(page));
    assert.deepEqual(JSON.parse(serializeCallList(page)), JSON.parse(compiled(page)));
  }
});
