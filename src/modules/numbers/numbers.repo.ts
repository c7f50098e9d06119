import { sql, type Insertable } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory, Tx } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import type { EndedCall } from './numbers.reputation.js';
import type { PhoneNumbersTable, ReputationLabel } from './numbers.tables.js';

export type NewPhoneNumber = Omit<Insertable<PhoneNumbersTable>, 'account_id'>;

export interface NewCharge {
  id: string;
  phoneNumberId: string;
  number: string;
  description: string;
  amountUsd: string;
  periodStart: Date;
}

export interface StoredReputation {
  score: number;
  label: ReputationLabel;
  calls: number;
  answered: number;
  short: number;
  checkedAt: Date;
}

/** A charge lasts one calendar month from its start (PostgreSQL's month arithmetic: Jan 31 + 1 month = Feb 28). */
const ONE_MONTH = sql`interval '1 month'`;

export function numberQueries(db: Executor) {
  const owned = (accountId: string) => db.selectFrom('phone_numbers').where('account_id', '=', accountId);

  return {
    /** Inserts the number unless any account already holds it; answers undefined then (the number is unique platform-wide). */
    insert(accountId: string, row: NewPhoneNumber) {
      return db
        .insertInto('phone_numbers')
        .values({ ...row, account_id: accountId })
        .onConflict((oc) => oc.column('number').doNothing())
        .returningAll()
        .executeTakeFirst();
    },

    list(accountId: string, filter: { unassigned?: boolean }, page: Page) {
      let matching = owned(accountId);
      if (filter.unassigned) matching = matching.where('agent_id', 'is', null);
      return paginate(matching, page, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'));
    },

    find(accountId: string, id: string) {
      return owned(accountId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Reads the number and locks it until the transaction ends, so concurrent assignments take turns. */
    findForUpdate(accountId: string, id: string) {
      return owned(accountId).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    },

    findByNumber(accountId: string, number: string) {
      return owned(accountId).selectAll().where('number', '=', number).executeTakeFirst();
    },

    findByAgent(accountId: string, agentId: string) {
      return owned(accountId).selectAll().where('agent_id', '=', agentId).executeTakeFirst();
    },

    setAgent(accountId: string, id: string, agentId: string | null, at: Date) {
      return db
        .updateTable('phone_numbers')
        .set({ agent_id: agentId, updated_at: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Frees every number routed to the agent; answers the numbers it freed. */
    unassignAgent(accountId: string, agentId: string, at: Date) {
      return db
        .updateTable('phone_numbers')
        .set({ agent_id: null, updated_at: at })
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .returning(['id', 'number'])
        .execute();
    },

    async delete(accountId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('phone_numbers')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    setReputation(accountId: string, id: string, reputation: StoredReputation) {
      return db
        .updateTable('phone_numbers')
        .set({
          reputation_score: reputation.score,
          reputation_label: reputation.label,
          reputation_calls: reputation.calls,
          reputation_answered: reputation.answered,
          reputation_short: reputation.short,
          reputation_checked_at: reputation.checkedAt,
        })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },

    /** Records an ended call for the reputation; a second delivery of its end event writes nothing. */
    async recordCall(accountId: string, call: EndedCall) {
      await db
        .insertInto('number_calls')
        .values({
          account_id: accountId,
          call_id: call.callId,
          from_number: call.fromNumber,
          ended_at: call.endedAt,
          answered: call.answered,
          short: call.short,
        })
        .onConflict((oc) => oc.columns(['account_id', 'call_id']).doNothing())
        .execute();
    },

    /** Deletes the number's recorded calls that ended before `before`. */
    async forgetCalls(accountId: string, fromNumber: string, before: Date) {
      await db
        .deleteFrom('number_calls')
        .where('account_id', '=', accountId)
        .where('from_number', '=', fromNumber)
        .where('ended_at', '<', before)
        .execute();
    },

    /** Per number: the recorded calls that ended since `since`, the answered ones, and the short ones. */
    async activity(accountId: string, numbers: readonly string[], since: Date) {
      if (numbers.length === 0) return [];
      const rows = await db
        .selectFrom('number_calls')
        .select([
          'from_number',
          sql<string>`count(*)`.as('calls'),
          sql<string>`count(*) FILTER (WHERE answered)`.as('answered'),
          sql<string>`count(*) FILTER (WHERE short)`.as('short'),
        ])
        .where('account_id', '=', accountId)
        .where('from_number', 'in', numbers)
        .where('ended_at', '>=', since)
        .groupBy('from_number')
        .execute();
      return rows.map((row) => ({
        number: row.from_number,
        calls: Number(row.calls),
        answered: Number(row.answered),
        short: Number(row.short),
      }));
    },

    /** The number to call from when none is named: the best reputation (unchecked counts as clean), then the oldest. */
    preferredCaller(accountId: string) {
      return owned(accountId)
        .select(['id', 'number'])
        .orderBy(sql`coalesce(reputation_score, 100)`, 'desc')
        .orderBy('created_at')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
    },

    /** Which of these numbers some account holds: the inventory offers only the others. */
    async takenAmong(numbers: readonly string[]): Promise<Set<string>> {
      if (numbers.length === 0) return new Set();
      const rows = await db.selectFrom('phone_numbers').select('number').where('number', 'in', numbers).execute();
      return new Set(rows.map((row) => row.number));
    },

    /** The account and agent of a number, whichever account holds it: an inbound call names only the dialled number. */
    routeOf(number: string) {
      return db
        .selectFrom('phone_numbers')
        .select(['id', 'account_id', 'agent_id', 'number'])
        .where('number', '=', number)
        .executeTakeFirst();
    },

    /** Charges one month from periodStart. */
    insertCharge(accountId: string, charge: NewCharge) {
      return db
        .insertInto('number_charges')
        .values({
          id: charge.id,
          account_id: accountId,
          phone_number_id: charge.phoneNumberId,
          number: charge.number,
          description: charge.description,
          amount_usd: charge.amountUsd,
          period_start: charge.periodStart,
          period_end: sql<Date>`${charge.periodStart}::timestamptz + ${ONE_MONTH}`,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** The account's charges whose period starts in [from, until), oldest first. */
    chargesBetween(accountId: string, from: Date, until: Date) {
      return db
        .selectFrom('number_charges')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('period_start', '>=', from)
        .where('period_start', '<', until)
        .orderBy('period_start')
        .orderBy('id')
        .execute();
    },

    /**
     * Charges the next month of every bought number whose paid period has ended by `now`, across all accounts; the
     * unique (number, period start) makes a second run charge nothing. Answers how many months it charged.
     */
    async renewDueCharges(now: Date): Promise<number> {
      const result = await sql`
        INSERT INTO number_charges (id, account_id, phone_number_id, number, description, amount_usd, period_start, period_end)
        SELECT gen_random_uuid(), p.account_id, p.id, p.number, 'Monthly fee for ' || p.number, p.monthly_fee_usd,
               paid.until, paid.until + ${ONE_MONTH}
        FROM phone_numbers p
        JOIN LATERAL (SELECT max(c.period_end) AS until FROM number_charges c WHERE c.phone_number_id = p.id) paid ON true
        WHERE p.source = 'purchased' AND paid.until <= ${now}
        ON CONFLICT (phone_number_id, period_start) DO NOTHING`.execute(db);
      return Number(result.numAffectedRows ?? 0n);
    },
  };
}

export type NumbersTx = Tx<ReturnType<typeof numberQueries>>;

export function createNumbersRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, numberQueries);
}

export type NumbersRepo = ReturnType<typeof createNumbersRepo>;
export type PhoneNumberRow = NonNullable<Awaited<ReturnType<NumbersRepo['find']>>>;
export type ChargeRow = Awaited<ReturnType<NumbersRepo['chargesBetween']>>[number];
