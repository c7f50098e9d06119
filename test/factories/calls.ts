/**
 * Seeds calls straight into the database, with transcript turns, cost items and events, the way the call engine
 * (a later issue) will write them. Tests then read them back through HTTP.
 */
import type { Db } from '../../src/db/client.js';
import { newId } from '../../src/lib/ids.js';
import { resolveScope, type Scope } from './scope.js';
import type {
  CallDirection,
  CallEventType,
  CallStatus,
  CostItemKind,
  TranscriptSpeaker,
} from '../../src/modules/calls/calls.tables.js';

export interface SeedTurn {
  speaker: TranscriptSpeaker;
  text: string;
  startMs?: number | null;
  endMs?: number | null;
}

export interface SeedCostItem {
  kind: CostItemKind;
  description: string;
  quantity: string;
  unit: string;
  unitPriceUsd: string;
  amountUsd: string;
}

export interface SeedEvent {
  type: CallEventType;
  data?: Record<string, unknown>;
  occurredAt?: Date;
}

/** Anything left out gets a value that fits the status; null is kept as null. */
export interface SeedCall {
  id?: string;
  direction?: CallDirection;
  status?: CallStatus;
  agentId?: string | null;
  agentVersion?: number | null;
  contactId?: string | null;
  campaignId?: string | null;
  disposition?: string | null;
  fromNumber?: string | null;
  toNumber?: string | null;
  createdAt?: Date;
  startedAt?: Date | null;
  answeredAt?: Date | null;
  endedAt?: Date | null;
  durationSeconds?: number | null;
  recordingStorageKey?: string | null;
  endReason?: string | null;
  transcript?: SeedTurn[];
  costItems?: SeedCostItem[];
  events?: SeedEvent[];
}

const OUR_NUMBER = '+14155550000';
const UNANSWERED: CallStatus[] = ['failed', 'busy', 'no_answer'];
const ANSWERED: CallStatus[] = ['connected', 'completed'];

const given = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
const plus = (at: Date, ms: number) => new Date(at.getTime() + ms);

export const DEFAULT_TRANSCRIPT: SeedTurn[] = [
  { speaker: 'agent', text: 'Hi, this is Sally from Parley. Is now a good time?', startMs: 0, endMs: 3200 },
  { speaker: 'caller', text: 'Sure, what is it about?', startMs: 3600, endMs: 5100 },
  {
    speaker: 'agent',
    text: 'You asked for a demo last week; shall I book one for Thursday?',
    startMs: 5400,
    endMs: 9000,
  },
  { speaker: 'caller', text: 'Thursday at ten works.', startMs: 9300, endMs: 10800 },
];

export const DEFAULT_COST_ITEMS: SeedCostItem[] = [
  {
    kind: 'telephony',
    description: 'Outbound minutes (sim)',
    quantity: '1',
    unit: 'minute',
    unitPriceUsd: '0.0140',
    amountUsd: '0.014000',
  },
  {
    kind: 'llm',
    description: 'parley-playbook tokens',
    quantity: '2.350',
    unit: '1k_tokens',
    unitPriceUsd: '0.0006',
    amountUsd: '0.001410',
  },
  {
    kind: 'stt',
    description: 'Speech to text',
    quantity: '0.7',
    unit: 'minute',
    unitPriceUsd: '0.0043',
    amountUsd: '0.003010',
  },
  {
    kind: 'tts',
    description: 'Speech synthesis',
    quantity: '412',
    unit: 'character',
    unitPriceUsd: '0.000015',
    amountUsd: '0.006180',
  },
];

function defaultEvents(status: CallStatus, createdAt: Date, callId: string): SeedEvent[] {
  const path: CallEventType[] = ['call.queued'];
  if (status !== 'queued') path.push('call.dialing');
  if (status !== 'queued' && status !== 'dialing') path.push('call.ringing');
  if (ANSWERED.includes(status)) path.push('call.connected');
  if (status === 'completed') path.push('call.completed');
  if (UNANSWERED.includes(status)) path.push('call.failed');
  return path.map((type, i) => ({
    type,
    occurredAt: plus(createdAt, i * 1000),
    data: type === 'call.failed' || type === 'call.completed' ? { callId, status } : { callId },
  }));
}

/** Inserts one call and its turns, cost items and events in one transaction; returns what it wrote. */
export async function insertCall(db: Db, accountId: string, seed: SeedCall = {}) {
  const id = seed.id ?? newId();
  const status = seed.status ?? 'completed';
  const direction = seed.direction ?? 'outbound';
  const createdAt = seed.createdAt ?? new Date();
  const startedAt = given(seed.startedAt, status === 'queued' ? null : plus(createdAt, 1000));
  const answered = ANSWERED.includes(status);
  const answeredAt = given(seed.answeredAt, answered && startedAt ? plus(startedAt, 5000) : null);
  const durationSeconds = given(
    seed.durationSeconds,
    status === 'completed' ? 42 : UNANSWERED.includes(status) ? 0 : null,
  );
  const endedAt = given(
    seed.endedAt,
    status === 'completed' && answeredAt
      ? plus(answeredAt, (durationSeconds ?? 0) * 1000)
      : UNANSWERED.includes(status) && startedAt
        ? plus(startedAt, 20_000)
        : null,
  );
  const farEnd = '+14155550199';
  const row = {
    id,
    account_id: accountId,
    agent_id: given(seed.agentId, null),
    agent_version: given(seed.agentVersion, seed.agentId ? 1 : null),
    contact_id: given(seed.contactId, null),
    campaign_id: given(seed.campaignId, null),
    direction,
    status,
    disposition: given(seed.disposition, status === 'completed' ? 'interested' : null),
    from_number: given(seed.fromNumber, direction === 'outbound' ? OUR_NUMBER : farEnd),
    to_number: given(seed.toNumber, direction === 'outbound' ? farEnd : OUR_NUMBER),
    created_at: createdAt,
    updated_at: endedAt ?? createdAt,
    started_at: startedAt,
    answered_at: answeredAt,
    ended_at: endedAt,
    duration_seconds: durationSeconds,
    recording_storage_key: given(
      seed.recordingStorageKey,
      status === 'completed' ? `recordings/${accountId}/${id}.wav` : null,
    ),
    end_reason: given(
      seed.endReason,
      status === 'completed' ? 'caller_hangup' : UNANSWERED.includes(status) ? status : null,
    ),
  };
  const transcript = seed.transcript ?? (answered ? DEFAULT_TRANSCRIPT : []);
  const costItems = seed.costItems ?? (status === 'completed' ? DEFAULT_COST_ITEMS : []);
  const events = seed.events ?? defaultEvents(status, createdAt, id);

  await db.transaction().execute(async (trx) => {
    await trx.insertInto('calls').values(row).execute();
    if (transcript.length) {
      await trx
        .insertInto('call_transcript_turns')
        .values(
          transcript.map((turn, seq) => ({
            call_id: id,
            account_id: accountId,
            seq,
            speaker: turn.speaker,
            text: turn.text,
            start_ms: turn.startMs ?? null,
            end_ms: turn.endMs ?? null,
          })),
        )
        .execute();
    }
    if (costItems.length) {
      await trx
        .insertInto('call_cost_items')
        .values(
          costItems.map((item, i) => ({
            id: newId(),
            call_id: id,
            account_id: accountId,
            kind: item.kind,
            description: item.description,
            quantity: item.quantity,
            unit: item.unit,
            unit_price_usd: item.unitPriceUsd,
            amount_usd: item.amountUsd,
            // Distinct times keep the items in the order given.
            created_at: plus(createdAt, i),
          })),
        )
        .execute();
    }
    if (events.length) {
      await trx
        .insertInto('call_events')
        .values(
          events.map((event) => ({
            id: newId(),
            account_id: accountId,
            call_id: id,
            type: event.type,
            data: JSON.stringify(event.data ?? {}),
            occurred_at: event.occurredAt ?? createdAt,
          })),
        )
        .execute();
    }
  });
  return { ...row, transcript, costItems, events };
}

export type SeededCall = Awaited<ReturnType<typeof insertCall>>;

/**
 * A call with its transcript, cost items and events (see insertCall), in the scope's account or `seed.accountId`.
 */
export async function buildCall(scope: Scope, seed: SeedCall & { accountId?: string } = {}) {
  const { accountId, ...rest } = seed;
  const { testApp, accountId: account } = await resolveScope(scope, accountId);
  return insertCall(testApp.infra.database.db, account, rest);
}

// Where these lived before the other factories had files of their own.
export { insertContact } from './contacts.js';
export { insertAgent } from './agents.js';
