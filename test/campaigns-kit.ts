/** What the campaign tests share: an account set up to dial (agent, numbers, a list), and polling of a campaign's stats. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { signUp, type SignedUp, type TestApp } from './helpers.js';
import { api, SALES_AGENT } from './calls-kit.js';

let numberSeq = 0;
const nextCallerNumber = () => `+1415555${String(3000 + (++numberSeq % 6000)).padStart(4, '0')}`;

export interface DialingAccount {
  user: SignedUp;
  agentId: string;
  numberIds: string[];
  listId: string;
  contacts: Map<string, string>;
}

export async function dialingAccount(
  t: TestApp,
  phones: string[],
  options: { numbers?: number; columns?: Record<string, string[]> } = {},
): Promise<DialingAccount> {
  const user = await signUp(t.app);
  const { ok } = api(t, user);
  const agent = await ok('POST', '/agents', { ...SALES_AGENT, voicemail: { action: 'hang_up' } });
  const numberIds: string[] = [];
  for (let i = 0; i < (options.numbers ?? 1); i++)
    numberIds.push((await ok('POST', '/phone-numbers', { number: nextCallerNumber() })).id);
  const extra = Object.keys(options.columns ?? {});
  const csv = [
    ['Phone', ...extra].join(','),
    ...phones.map((p, i) => [p, ...extra.map((c) => options.columns![c]![i] ?? '')].join(',')),
  ].join('\n');
  const imported = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=Leads&defaultCountry=US',
    headers: { ...user.headers, 'content-type': 'text/csv' },
    payload: csv,
  });
  assert.equal(imported.statusCode, 200, imported.body);
  const listId = imported.json().listId as string;
  const contacts = new Map<string, string>();
  for (let offset = 0; ; offset += 500) {
    const page = await ok('GET', `/contact-lists/${listId}/contacts?limit=500&offset=${offset}`);
    for (const c of page.contacts as Array<{ id: string; phone: string }>) contacts.set(c.phone, c.id);
    if (page.contacts.length < 500) break;
  }
  return { user, agentId: agent.id, numberIds, listId, contacts };
}

/** Creates a campaign of the account's agent over its list, with `settings` on top, and starts it. */
export async function startCampaign(
  t: TestApp,
  account: DialingAccount,
  settings: Record<string, unknown> & { name: string },
) {
  const { ok } = api(t, account.user);
  const campaign = await ok('POST', '/campaigns', {
    agentId: account.agentId,
    contactListIds: [account.listId],
    ...settings,
  });
  const started = await ok('POST', `/campaigns/${campaign.id}/start`);
  return { campaign, started };
}

/**
 * Polls the campaign's stats until `done` holds: every 50 ms for the first two seconds, then every 250 ms, so that a
 * long campaign's polling (several queries each time) does not crowd its dialer out of the database connections.
 */
export async function waitForStats(
  t: TestApp,
  who: { headers: Record<string, string> },
  campaignId: string,
  done: (stats: any) => boolean,
  what = 'the campaign',
  timeoutMs = 270_000,
) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let polls = 0; Date.now() < deadline; polls++) {
    last = await api(t, who).ok('GET', `/campaigns/${campaignId}/stats`);
    if (done(last)) return last as any;
    await sleep(polls < 40 ? 50 : 250);
  }
  throw new Error(`${what} did not get there in time: ${JSON.stringify(last)}`);
}

/** Every contact of the campaign has exactly one call: none lost, none dialed twice. */
export async function assertEachContactCalledOnce(
  db: TestApp['infra']['database']['db'],
  campaignId: string,
  contacts: number,
) {
  const perContact = await db
    .selectFrom('calls')
    .select(['contact_id', (eb) => eb.fn.countAll<string>().as('calls')])
    .where('campaign_id', '=', campaignId)
    .groupBy('contact_id')
    .execute();
  assert.equal(perContact.length, contacts, 'every contact was called');
  assert.ok(
    perContact.every((row) => Number(row.calls) === 1),
    'no contact was called twice',
  );
}
