/**
 * Free-text search of contacts (`q`): which texts may be searched, and how far a search counts its matches.
 *
 * A search is a LIKE of `%text%` (lowercased) over contacts.search_text, found through the trigram index
 * contacts_search_text_idx (migration 0019). pg_trgm looks such a pattern up by the trigrams of its words (runs of letters and digits), padded
 * with spaces where the word's edge is known: next to a space or punctuation inside the text, but not at either end of
 * it, where the wildcards are. A text without a single trigram ("%_%", "a.") makes the index return every contact in
 * the table, so every search would read them all: such a text is refused.
 */

const WORD = /[\p{L}\p{N}]+/gu;

/** True when pg_trgm finds at least one trigram in the pattern `%text%` (text with LIKE's wildcards taken literally). */
export function searchHasTrigram(text: string): boolean {
  for (const match of text.matchAll(WORD)) {
    const leftPadding = match.index > 0 ? 2 : 0;
    const rightPadding = match.index + match[0].length < text.length ? 1 : 0;
    if (leftPadding + [...match[0]].length + rightPadding >= 3) return true;
  }
  return false;
}

/** What is wrong with a search text, or null: at least 3 characters, no control characters, something to look up. */
export function searchTextProblem(q: string): string | null {
  const text = q.trim();
  if (text.length < 3) return 'needs at least 3 characters, not counting spaces around them';
  if (/[\x00-\x1f]/.test(q)) return 'must not contain control characters (tab, newline, NUL)';
  if (!searchHasTrigram(text))
    return 'has too few letters or digits to look up: give 3 in a row (e.g. "ada"), or words separated by a space or punctuation (e.g. "wu li")';
  return null;
}

/**
 * A search counts its matches up to this many past the page's offset, never all of them: counting every contact a
 * common word matches would read most of the account. `total` is then a lower bound, and still more than
 * offset + limit whenever there is a next page.
 */
export const SEARCH_COUNT_AHEAD = 1_000;
