/**
 * Which tables holding tenant data a SQL statement reaches without its own account_id condition. Read by
 * test/sql-scoping.test.ts over every statement the repos and the bulk paths run.
 *
 * A statement is split into query scopes (the statement, each parenthesized SELECT/WITH/VALUES/INSERT/UPDATE/DELETE,
 * each arm of a UNION), and each use of a tenant table (after FROM, JOIN, UPDATE, INTO, USING) must be scoped:
 * - its account_id compared with a parameter (`x.account_id = $1`, `IN ($1, ...)`, `= ANY($1)`); an unqualified
 *   `account_id` belongs to the one tenant table of its scope (or of the nearest enclosing scope that has one);
 * - or its account_id equal to that of a table that is scoped (`ON b.account_id = a.account_id`);
 * - an INSERT is scoped when it writes the account_id column.
 * It reads the SQL Kysely compiles and the SQL written by hand in `sql` templates; it is not a full parser, and a
 * construct it does not know makes it report a table as unscoped rather than pass it.
 */

interface Token {
  kind: 'word' | 'quoted' | 'param' | 'string' | 'number' | 'punct';
  /** Lower case for words; as written for quoted identifiers. */
  text: string;
}

interface Scope {
  parent: Scope | null;
}

interface TableUse {
  table: string;
  alias: string;
  scope: Scope;
  /** An INSERT's target: scoped by its column list instead. */
  insertColumns: string[] | null;
}

/** A reference to an account_id column: `alias.account_id`, or unqualified (alias null) in a scope. */
interface ColumnRef {
  alias: string | null;
  scope: Scope;
}

const TOKEN =
  /\s+|--[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^']|'')*'|"(?:[^"]|"")*"|\$\d+|\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_$]*|::|<>|!=|<=|>=|./gy;

function tokenize(statement: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(statement); match; match = TOKEN.exec(statement)) {
    const text = match[0];
    if (/^\s/.test(text) || text.startsWith('--') || text.startsWith('/*')) continue;
    if (text.startsWith("'")) tokens.push({ kind: 'string', text });
    else if (text.startsWith('"')) tokens.push({ kind: 'quoted', text: text.slice(1, -1).replaceAll('""', '"') });
    else if (text.startsWith('$')) tokens.push({ kind: 'param', text });
    else if (/^\d/.test(text)) tokens.push({ kind: 'number', text });
    else if (/^[A-Za-z_]/.test(text)) tokens.push({ kind: 'word', text: text.toLowerCase() });
    else tokens.push({ kind: 'punct', text });
  }
  return tokens;
}

const STARTS_QUERY = new Set(['select', 'with', 'values', 'insert', 'update', 'delete']);
const SET_OPERATORS = new Set(['union', 'intersect', 'except']);
// Words that may follow a table name and are not its alias.
const NOT_AN_ALIAS = new Set([
  'where',
  'on',
  'using',
  'join',
  'inner',
  'left',
  'right',
  'full',
  'cross',
  'natural',
  'set',
  'order',
  'group',
  'limit',
  'offset',
  'returning',
  'for',
  'union',
  'intersect',
  'except',
  'having',
  'window',
  'values',
  'select',
  'default',
  'lateral',
  'fetch',
  'tablesample',
  'overriding',
  'do',
]);

const isName = (token: Token | undefined): token is Token =>
  token !== undefined && (token.kind === 'quoted' || token.kind === 'word');
const isPunct = (token: Token | undefined, text: string) => token?.kind === 'punct' && token.text === text;
const isWord = (token: Token | undefined, text: string) => token?.kind === 'word' && token.text === text;
const isAccountId = (token: Token | undefined) => isName(token) && token.text === 'account_id';

/** The tenant tables (those in `tenant`) that `statement` uses without scoping them by account. */
export function unscopedTenantTables(statement: string, tenant: ReadonlySet<string>): string[] {
  const tokens = tokenize(statement);
  const uses: TableUse[] = [];
  const bound: ColumnRef[] = [];
  const ties: Array<[ColumnRef, ColumnRef]> = [];
  const root: Scope = { parent: null };
  // Each open parenthesis: whether it opened a query scope, and the scope to return to.
  const frames: Array<{ query: boolean; scope: Scope }> = [{ query: true, scope: root }];
  const current = () => frames.at(-1)!.scope;

  /** Reads a table name at `i` (`name` or `schema.name`) and its alias; answers the index after them. */
  function readTable(i: number, keyword: string): number {
    let nameAt = i;
    if (isPunct(tokens[i + 1], '.') && isName(tokens[i + 2])) nameAt = i + 2;
    const table = tokens[nameAt]!.text;
    let next = nameAt + 1;
    let alias = table;
    if (isWord(tokens[next], 'as') && isName(tokens[next + 1])) {
      alias = tokens[next + 1]!.text;
      next += 2;
    } else if (
      tokens[next]?.kind === 'quoted' ||
      (tokens[next]?.kind === 'word' && !NOT_AN_ALIAS.has(tokens[next]!.text))
    ) {
      alias = tokens[next]!.text;
      next += 1;
    }
    let insertColumns: string[] | null = null;
    if (keyword === 'into') {
      insertColumns = [];
      if (isPunct(tokens[next], '(')) {
        for (next++; next < tokens.length && !isPunct(tokens[next], ')'); next++)
          if (isName(tokens[next])) insertColumns.push(tokens[next]!.text);
        next++;
      }
    }
    uses.push({ table, alias, scope: current(), insertColumns });
    return next;
  }

  /** The account_id reference at `i` (a name token), qualified by the `alias.` before it if any. */
  const refAt = (i: number): ColumnRef => ({
    alias: isPunct(tokens[i - 1], '.') && isName(tokens[i - 2]) ? tokens[i - 2]!.text : null,
    scope: current(),
  });
  /** The account_id reference starting at `i` (`account_id` or `alias.account_id`), or null. */
  function refStartingAt(i: number): ColumnRef | null {
    if (isAccountId(tokens[i]) && !isPunct(tokens[i + 1], '.')) return { alias: null, scope: current() };
    if (isName(tokens[i]) && isPunct(tokens[i + 1], '.') && isAccountId(tokens[i + 2]))
      return { alias: tokens[i]!.text, scope: current() };
    return null;
  }

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (isPunct(token, '(')) {
      const opensQuery = tokens[i + 1]?.kind === 'word' && STARTS_QUERY.has(tokens[i + 1]!.text);
      frames.push({ query: opensQuery, scope: opensQuery ? { parent: current() } : current() });
      continue;
    }
    if (isPunct(token, ')')) {
      if (frames.length > 1) frames.pop();
      continue;
    }
    if (token.kind === 'word' && SET_OPERATORS.has(token.text)) {
      // The next arm is a scope of its own, beside this one.
      const frame = [...frames].reverse().find((f) => f.query)!;
      frame.scope = { parent: frame.scope.parent };
      for (let f = frames.length - 1; f >= 0 && !frames[f]!.query; f--) frames[f]!.scope = frame.scope;
      continue;
    }
    if (token.kind === 'word' && ['from', 'join', 'update', 'into', 'using'].includes(token.text)) {
      const previous = tokens[i - 1];
      // Not a table: FOR UPDATE, DO UPDATE SET, IS DISTINCT FROM, EXTRACT(x FROM y), JOIN ... USING (columns).
      if (token.text === 'update' && (isWord(previous, 'for') || isWord(previous, 'key') || isWord(previous, 'do')))
        continue;
      if (token.text === 'from' && isWord(previous, 'distinct')) continue;
      let at = i + 1;
      if (isWord(tokens[at], 'only')) at++;
      if (!isName(tokens[at]) || STARTS_QUERY.has(tokens[at]!.text)) continue;
      // A function (FROM unnest(...)); INTO's parenthesis is its column list.
      if (token.text !== 'into' && isPunct(tokens[at + 1], '(')) continue;
      if (tokens[at]!.kind === 'word' && (tokens[at]!.text === 'lateral' || tokens[at]!.text === 'set')) continue;
      let next = readTable(at, token.text);
      // FROM a, b: more tables.
      while (
        token.text === 'from' &&
        isPunct(tokens[next], ',') &&
        isName(tokens[next + 1]) &&
        !isPunct(tokens[next + 2], '(')
      )
        next = readTable(next + 1, 'from');
      i = next - 1;
      continue;
    }
    if (!isAccountId(token) || isPunct(tokens[i + 1], '.')) continue;
    const ref = refAt(i);
    const after = tokens[i + 1];
    if (isPunct(after, '=')) {
      const rhs = tokens[i + 2];
      if (rhs?.kind === 'param') bound.push(ref);
      else if (isWord(rhs, 'any') && isPunct(tokens[i + 3], '(') && tokens[i + 4]?.kind === 'param') bound.push(ref);
      else {
        const other = refStartingAt(i + 2);
        if (other) ties.push([ref, other]);
      }
    } else if (isWord(after, 'in') && isPunct(tokens[i + 2], '(') && tokens[i + 3]?.kind === 'param') bound.push(ref);
    // $1 = account_id
    const qualified = ref.alias !== null;
    const before = tokens[qualified ? i - 3 : i - 1];
    if (isPunct(before, '=') && tokens[qualified ? i - 4 : i - 2]?.kind === 'param') bound.push(ref);
  }

  /** The table use a reference names: by alias through the enclosing scopes, or the one tenant table in reach. */
  function resolve(ref: ColumnRef): TableUse | null {
    for (let scope: Scope | null = ref.scope; scope; scope = scope.parent) {
      const inScope = uses.filter((use) => use.scope === scope && use.insertColumns === null);
      if (ref.alias !== null) {
        const named = inScope.find((use) => use.alias === ref.alias);
        if (named) return named;
        continue;
      }
      const tenants = inScope.filter((use) => tenant.has(use.table));
      if (tenants.length === 1) return tenants[0]!;
      if (tenants.length > 1) return null; // ambiguous: PostgreSQL would refuse it too
    }
    return null;
  }

  const scoped = new Set<TableUse>();
  for (const ref of bound) {
    const use = resolve(ref);
    if (use) scoped.add(use);
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (const [a, b] of ties) {
      const [x, y] = [resolve(a), resolve(b)];
      if (!x || !y || scoped.has(x) === scoped.has(y)) continue;
      scoped.add(scoped.has(x) ? y : x);
      changed = true;
    }
  }
  return uses
    .filter((use) => tenant.has(use.table))
    .filter((use) => (use.insertColumns ? !use.insertColumns.includes('account_id') : !scoped.has(use)))
    .map((use) => (use.alias === use.table ? use.table : `${use.table} (as ${use.alias})`));
}
