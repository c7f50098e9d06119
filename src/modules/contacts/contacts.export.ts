/**
 * GET /v1/exports/contacts.csv: streamed in keyset batches, so memory stays flat however many contacts
 * there are, and each batch is one short query (PGlite serves other requests in between). A batch is cut
 * by rows and by the size of its attributes, so it stays small whatever the contacts hold.
 */
import { toCsvLines } from '../../lib/csv.js';
import type { ContactFilters, ContactsRepo } from './contacts.repo.js';

const BATCH_ROWS = 5_000;
const BATCH_ATTRIBUTE_BYTES = 4 * 1024 * 1024;

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
  let after: { at: string; id: string } | null = null;
  for (;;) {
    const rows = await repo.exportBatch(accountId, filters, after, BATCH_ROWS, BATCH_ATTRIBUTE_BYTES);
    if (rows.length === 0) return;
    yield toCsvLines(
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
    const last = rows[rows.length - 1]!;
    after = { at: last.cursor_at, id: last.id };
  }
}
