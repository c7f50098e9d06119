/** IANA time zone names, checked against the runtime's own tz database. */
const known = new Map<string, string | null>();
const MAX_REMEMBERED = 2_000;

/** The canonical IANA name ("america/new_york" -> "America/New_York", "US/Eastern" stays valid), or null. */
export function canonicalTimeZone(name: string): string | null {
  const cached = known.get(name);
  if (cached !== undefined) return cached;
  let canonical: string | null = null;
  // Offsets like "+05:00" are accepted by Intl but are not zones: a callee's zone must follow DST.
  if (/^[A-Za-z]/.test(name)) {
    try {
      canonical = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      canonical = null;
    }
  }
  // Bounded: an import can carry any number of distinct junk values.
  if (known.size >= MAX_REMEMBERED) known.clear();
  known.set(name, canonical);
  return canonical;
}
