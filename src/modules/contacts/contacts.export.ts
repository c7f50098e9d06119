/**
 * GET /v1/exports/contacts.csv: streamed in keyset batches (newest first, on the (account, created_at, id) index), so
 * memory stays flat however many contacts there are. Each batch reads a bounded number of the account's contacts,
 * whatever the filters, in one short transaction that holds the database only for itself: on PGlite (one connection,
 * on the main thread) a turn of the event loop before each batch lets other accounts' requests in, since PGlite
 * answers through promises alone and they would otherwise wait for the whole export. The number is sized by time,
 * so a batch stays short on a busy machine too, and a batch is also cut by the size of its attributes. The next batch
 * is read only when the client has taken the previous one.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { toCsvLines } from '../../lib/csv.js';
import type { ContactFilters, ContactsRepo, ExportCursor } from './contacts.repo.js';

const BATCH_ATTRIBUTE_BYTES = 1024 * 1024;
/** What one batch (read and written as CSV) should take: about what another account may wait for it. */
const BATCH_TARGET_MS = 40;
export const BATCH_ROWS = { first: 500, min: 100, max: 5_000 };

/**
 * The rows of the next batch, from those of the last and how long it took: scaled towards BATCH_TARGET_MS, by at most
 * the square root of the ratio at a time (one slow batch, a pause for garbage collection say, does not halve the next).
 */
export function nextBatchRows(rows: number, tookMs: number): number {
  const scaled = rows * Math.sqrt(BATCH_TARGET_MS / Math.max(tookMs, 1));
  return Math.round(Math.min(BATCH_ROWS.max, Math.max(BATCH_ROWS.min, scaled)));
}

export const EXPORT_COLUMNS = [
  'id',
  'first_name',
  'last_name',
  'phone',
  'email',
  'company',
  'timezone',
  'dnc',
  'attributes',
  'created_at',
  'updated_at',
];

export async function* exportContactsCsv(
  repo: ContactsRepo,
  accountId: string,
  filters: ContactFilters,
): AsyncGenerator<string> {
  yield toCsvLines([EXPORT_COLUMNS]);
  let after: ExportCursor | null = null;
  let size = BATCH_ROWS.first;
  for (;;) {
    await nextTurn();
    const started = performance.now();
    const { rows, next } = await repo.exportBatch(accountId, filters, after, size, BATCH_ATTRIBUTE_BYTES);
    const csv =
      rows.length === 0
        ? null
        : toCsvLines(
            rows.map((c) => [
              c.id,
              c.first_name,
              c.last_name,
              c.phone_e164,
              c.email,
              c.company,
              c.timezone,
              c.dnc,
              Object.keys(c.attributes).length > 0 ? JSON.stringify(c.attributes) : '',
              c.created_at.toISOString(),
              c.updated_at.toISOString(),
            ]),
          );
    size = nextBatchRows(size, performance.now() - started);
    if (csv !== null) yield csv;
    if (!next) return;
    after = next;
  }
}
