/**
 * Phone-number reputation as stored checks: computed from the module's own record of the calls each number placed
 * (number_calls, written as each call ends), kept on the number's row, and redone when older than an hour.
 */
import type { Clock } from '../../lib/clock.js';
import { envelope, type Page } from '../../db/pagination.js';
import type { NumbersRepo, PhoneNumberRow } from './numbers.repo.js';
import {
  endedCallOf,
  REPUTATION_WINDOW_MS,
  scoreReputation,
  type CallEndEvent,
  type NumberActivity,
} from './numbers.reputation.js';

/** A stored reputation check older than this is redone when the reputation list is read. */
export const REPUTATION_MAX_AGE_MS = 60 * 60_000;

/** Recorded calls older than this are deleted: the reputation reads only the last 24 hours. */
const RECORDED_CALLS_KEPT_MS = 2 * REPUTATION_WINDOW_MS;

/** A number's stored check, as the API shows it; null when none was made. */
export function reputationOf(row: PhoneNumberRow) {
  if (row.reputation_checked_at === null || row.reputation_score === null || row.reputation_label === null) return null;
  const calls = row.reputation_calls ?? 0;
  const answered = row.reputation_answered ?? 0;
  return {
    score: row.reputation_score,
    label: row.reputation_label,
    calls24h: calls,
    answeredCalls24h: answered,
    shortCalls24h: row.reputation_short ?? 0,
    answerRate: calls > 0 ? Math.round((answered / calls) * 1000) / 1000 : null,
    checkedAt: row.reputation_checked_at.toISOString(),
  };
}

export const toReputation = (row: PhoneNumberRow) => ({
  phoneNumberId: row.id,
  number: row.number,
  ...reputationOf(row)!,
});

export function createReputationChecks(deps: { repo: NumbersRepo; clock: Clock }) {
  const { repo, clock } = deps;

  /** Computes the rows' reputation from their calls of the last 24 hours and stores it; answers the updated rows. */
  async function check(accountId: string, rows: PhoneNumberRow[]) {
    if (rows.length === 0) return [];
    const now = clock.now();
    // Read before the transaction: on PGlite the pool is the transaction's one connection.
    const activity = await repo.activity(
      accountId,
      rows.map((row) => row.number),
      new Date(now.getTime() - REPUTATION_WINDOW_MS),
    );
    const byNumber = new Map(activity.map(({ number, ...counts }) => [number, counts]));
    return repo.transaction(async (tx) => {
      const checked: PhoneNumberRow[] = [];
      for (const row of rows) {
        const counts: NumberActivity = byNumber.get(row.number) ?? { calls: 0, answered: 0, short: 0 };
        const updated = await tx.setReputation(accountId, row.id, {
          ...scoreReputation(counts),
          ...counts,
          checkedAt: now,
        });
        // Released meanwhile: nothing to show for it.
        if (updated) checked.push(updated);
      }
      return checked;
    });
  }

  async function current(accountId: string, rows: PhoneNumberRow[]) {
    const staleBefore = clock.now().getTime() - REPUTATION_MAX_AGE_MS;
    const stale = rows.filter(
      (row) => row.reputation_checked_at === null || row.reputation_checked_at.getTime() < staleBefore,
    );
    const fresh = new Map((await check(accountId, stale)).map((row) => [row.id, row]));
    return rows.map((row) => fresh.get(row.id) ?? row);
  }

  return {
    check,

    /** The rows, each with a check made now where it had none or an older one. */
    current,

    /** Every number's reputation; a check never made, or older than an hour, is made now. */
    async list(accountId: string, page: Page) {
      const { items, total } = await repo.list(accountId, {}, page);
      const rows = (await current(accountId, items)).filter((row) => reputationOf(row) !== null);
      return envelope('reputations', rows.map(toReputation), total, page);
    },

    /**
     * Subscriber to call.completed / call.failed: records an outbound call for its number's reputation, and forgets
     * the number's calls too old to count. Idempotent: a call is recorded once however often its event comes.
     */
    async recordCallEnded(event: CallEndEvent & { accountId: string }) {
      const call = endedCallOf(event);
      if (!call) return { recorded: false };
      await repo.recordCall(event.accountId, call);
      await repo.forgetCalls(
        event.accountId,
        call.fromNumber,
        new Date(clock.now().getTime() - RECORDED_CALLS_KEPT_MS),
      );
      return { recorded: true };
    },
  };
}
