/**
 * What the call engine tests share: an app with job workers and a virtual clock, an account set up to call (an active
 * agent, a number to call from, contacts), helpers to place a call and wait for it to end, and pauses that hold calls
 * at a known point (dialing, or in the conversation) until the test lets them go.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { buildTestApp, signUp, type SignedUp, type TestApp, type TestAppOptions } from './helpers.js';
import { startJobWorkers, type JobWorkers } from '../src/background.js';
import { createVirtualClock, type Clock, type VirtualClock } from '../src/lib/clock.js';
import { isFinal } from '../src/modules/calls/calls.tables.js';

/** The agent every test calls with: a playbook the built-in engine follows, an FAQ, an objection and a closer. */
export const SALES_AGENT = {
  name: 'Sales Sally',
  status: 'active',
  firstMessage: 'Hi, this is Sally from Acme. Do you have a minute?',
  playbook:
    '1. Say "We help teams book more demos with AI phone agents."\n2. Ask "Would you like a short demo next week?"',
  faq: 'How much does it cost? It starts at 49 dollars a month.',
  objections: 'too expensive -> "Most teams earn it back in the first month."',
  closers: '"Great, I will send you an invite."',
  voicemail: {
    action: 'leave_message',
    message: 'Hi, this is Sally from Acme. Please call us back at your convenience.',
  },
};

/**
 * Where calls wait on the clock: `network` is the shared clock (the simulated network dialing and ringing), and
 * `conversation` a connected call's own time line (its turns, and the wait for the agent).
 */
export type WaitKind = 'network' | 'conversation';

/**
 * Holds calls where they wait on the clock, so a test acts on a call in a known state without racing it: while a kind
 * is held, each wait of that kind pauses until the test lets it go. A paused wait still ends when its call is ended
 * (its signal aborts).
 */
export interface CallPauses {
  hold(kind: WaitKind): void;
  /** Resolves once `count` waits are paused. */
  paused(count?: number): Promise<void>;
  /** Lets the paused waits go and, still holding, resolves once `count` waits are paused again. */
  step(count?: number): Promise<void>;
  /** Lets every paused wait go and holds nothing more. */
  release(): void;
}

/** A virtual clock whose waits pause while their kind is held (see CallPauses). */
function pausableClock(base: VirtualClock): { clock: VirtualClock; pauses: CallPauses } {
  const held = new Set<WaitKind>();
  let waiting: Array<() => void> = [];
  let watchers: Array<() => void> = [];
  const notify = () => {
    for (const watch of watchers) watch();
  };

  function gate(kind: WaitKind, signal?: AbortSignal): Promise<void> {
    if (!held.has(kind)) return Promise.resolve();
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        waiting = waiting.filter((other) => other !== go);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      waiting.push(go);
      notify();
    });
  }

  const paused = (count = 1) =>
    new Promise<void>((resolve) => {
      const watch = () => {
        if (waiting.length < count) return;
        watchers = watchers.filter((other) => other !== watch);
        resolve();
      };
      watchers.push(watch);
      watch();
    });

  const letGo = () => {
    const going = waiting;
    waiting = [];
    for (const go of going) go();
  };

  const clock: VirtualClock = {
    now: () => base.now(),
    advance: (ms) => base.advance(ms),
    async sleep(ms, signal) {
      await gate('network', signal);
      await base.sleep(ms, signal);
    },
    timeline(): Clock {
      const own = base.timeline!();
      return {
        now: () => own.now(),
        async sleep(ms, signal) {
          await gate('conversation', signal);
          await own.sleep(ms, signal);
        },
      };
    },
  };

  const pauses: CallPauses = {
    hold: (kind) => void held.add(kind),
    paused,
    step(count = 1) {
      letGo();
      return paused(count);
    },
    release() {
      held.clear();
      letGo();
    },
  };
  return { clock, pauses };
}

export interface CallsKit {
  t: TestApp;
  clock: VirtualClock;
  pauses: CallPauses;
  workers: JobWorkers;
  close(): Promise<void>;
}

/** The clock's waits take no real time: a test that needs a call in a state holds it there (see CallPauses). */
export async function startCallsApp(options: TestAppOptions = {}): Promise<CallsKit> {
  const { clock, pauses } = pausableClock(createVirtualClock({ start: new Date('2026-03-02T15:00:00.000Z') }));
  const t = await buildTestApp({
    ...options,
    clock,
    env: { RATE_LIMIT_PER_MINUTE: '100000', VOICE_PROVIDER_SECRET: 'provider-secret-for-tests', ...options.env },
  });
  const workers = await startJobWorkers({
    db: t.infra.database.db,
    services: t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  const kit: CallsKit = {
    t,
    clock,
    pauses,
    workers,
    async close() {
      pauses.release();
      await kit.workers.stop(10_000);
      await t.close();
    },
  };
  return kit;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export function api(t: TestApp, who: { headers: Record<string, string> }) {
  const send = (method: Method, url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: who.headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  return {
    send,
    async ok(method: Method, url: string, payload?: unknown) {
      const response = await send(method, url, payload);
      assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
      return response.json();
    },
  };
}

export interface CallingAccount {
  user: SignedUp;
  agentId: string;
  numberId: string;
  callerNumber: string;
  /** Contact id by phone number. */
  contacts: Map<string, string>;
}

/** A new account with an active agent, a number to call from, and contacts with these numbers (and optional columns). */
let numbers = 0;
/** A number to call from, different for every account (a number belongs to one account). */
const nextCallerNumber = () => `+1415555${String(2000 + (++numbers % 7000)).padStart(4, '0')}`;

export async function callingAccount(
  t: TestApp,
  people: Array<{ phone: string; firstName?: string; persona?: string }>,
  agent: Record<string, unknown> = SALES_AGENT,
): Promise<CallingAccount> {
  const user = await signUp(t.app);
  const { ok } = api(t, user);
  const created = await ok('POST', '/agents', agent);
  const number = await ok('POST', '/phone-numbers', { number: nextCallerNumber() });
  const csv = [
    'First Name,Phone,Persona',
    ...people.map((p, i) => `${p.firstName ?? `Person${i}`},${p.phone},${p.persona ?? ''}`),
  ].join('\n');
  const imported = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=Leads&defaultCountry=US',
    headers: { ...user.headers, 'content-type': 'text/csv' },
    payload: csv,
  });
  assert.equal(imported.statusCode, 200, imported.body);
  const listed = await ok('GET', `/contacts?listId=${imported.json().listId}&limit=500`);
  const contacts = new Map<string, string>(listed.contacts.map((c: { id: string; phone: string }) => [c.phone, c.id]));
  return { user, agentId: created.id, numberId: number.id, callerNumber: number.number, contacts };
}

export async function placeCall(
  t: TestApp,
  account: CallingAccount,
  phone: string,
  body: Record<string, unknown> = {},
) {
  const contactId = account.contacts.get(phone);
  assert.ok(contactId, `a contact with ${phone}`);
  const placed = await api(t, account.user).ok('POST', `/crm/contacts/${contactId}/call`, {
    agentId: account.agentId,
    ...body,
  });
  assert.equal(placed.status, 'queued');
  return placed.callId as string;
}

/** Polls the call until `done` holds (by default: it ended), then answers its detail. */
export async function waitForCall(
  t: TestApp,
  who: { headers: Record<string, string> },
  callId: string,
  done = (call: { status: string }) => isFinal(call.status),
) {
  for (let i = 0; i < 1200; i++) {
    const response = await t.app.inject({ method: 'GET', url: `/api/v1/calls/${callId}`, headers: who.headers });
    assert.equal(response.statusCode, 200, response.body);
    const call = response.json();
    if (done(call)) return call;
    await sleep(50);
  }
  throw new Error(`call ${callId} did not get there in time`);
}

export async function callEvents(t: TestApp, who: { headers: Record<string, string> }, callId: string) {
  return (await api(t, who).ok('GET', `/calls/${callId}/events?limit=500`)).events as Array<{
    type: string;
    data: Record<string, unknown>;
  }>;
}

/** Decimal strings to integer micro-dollars, so sums are exact. */
export function micros(amount: string): bigint {
  const [whole, fraction = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
}
