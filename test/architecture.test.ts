/**
 * The structure of src/, read from its imports: dependencies point one way.
 * - Layers, lowest first: lib, providers, db, events, jobs, http, the modules, the composition root. A file imports
 *   only its own layer or lower ones; the one exception is src/db/types.ts, which joins every module's table types.
 * - Among the modules, imports form no circle (a module's ports name only modules below it).
 * - No file import circle anywhere.
 * - The composition root builds the services in one pass: nothing in createServices names a service built later.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

const LAYERS = ['lib', 'providers', 'db', 'events', 'jobs', 'http', 'modules', 'root'] as const;
type Layer = (typeof LAYERS)[number];

function layerOf(file: string): Layer {
  const [top] = file.split('/');
  if (file === 'config.ts' || file === 'webhook-verify.ts') return 'lib';
  if (top && (LAYERS as readonly string[]).includes(top) && file.includes('/')) return top as Layer;
  return 'root';
}

const moduleOf = (file: string) => (file.startsWith('modules/') ? file.split('/')[1]! : null);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith('.ts') && !entry.endsWith('.test.ts') && !entry.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)|(?:^|\n)\s*import\s+'(\.[^']+)'/g;

/** Every file of src/ (relative path) with the files of src/ it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    const text = readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    const targets: string[] = [];
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? match[3]!;
      const target = resolve(dirname(path), spec.replace(/\.js$/, '.ts'));
      if (target.startsWith(SRC) && existsSync(target)) targets.push(relative(SRC, target));
    }
    graph.set(relative(SRC, path), targets);
  }
  return graph;
}

const graph = importGraph();

test('no import runs from a lower layer to a higher one (only db/types.ts joins the tables)', () => {
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (file === 'db/types.ts') continue;
      if (LAYERS.indexOf(layerOf(target)) > LAYERS.indexOf(layerOf(file)))
        upward.push(`${file} (${layerOf(file)}) imports ${target} (${layerOf(target)})`);
    }
  }
  assert.deepEqual(upward, []);
  assert.ok(graph.size > 100, `read ${graph.size} files`);
});

/** Strongly connected components of more than one node (Tarjan), or a node importing itself. */
function circles(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!));
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || edges.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!indices.has(node)) visit(node);
  return found;
}

test('the modules import each other without a circle', () => {
  const edges = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = moduleOf(file);
    if (!from) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    for (const target of targets) {
      const to = moduleOf(target);
      if (to && to !== from) edges.get(from)!.add(to);
    }
  }
  assert.deepEqual(circles(edges), []);
  assert.ok(edges.size >= 15, `found ${edges.size} modules`);
});

test('no file import circle', () => {
  const edges = new Map([...graph].map(([file, targets]) => [file, new Set(targets)]));
  // db/types.ts joins the table types for Kysely; a table file that reaches db/ would close a circle through it.
  edges.set('db/types.ts', new Set());
  assert.deepEqual(circles(edges), []);
});

test('createServices builds each service before anything names it (no forward closure, no late binding)', () => {
  const source = readFileSync(join(SRC, 'services.ts'), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  const signature = source.indexOf('export function createServices');
  const body = source.slice(source.indexOf(') {\n', signature));
  const declared = [...body.matchAll(/\n\s*const (\w+) = /g)].map((match) => ({
    name: match[1]!,
    at: match.index!,
  }));
  const early: string[] = [];
  for (const { name, at } of declared) {
    const before = body.slice(0, at);
    // A property of that name (`options.log`, `{ log: … }`) is not the service.
    const use = new RegExp(`(?<![.\\w])${name}\\b(?!\\??:)`).exec(before);
    if (use) early.push(`${name} is named before it is built: …${before.slice(use.index - 40, use.index + 20)}…`);
  }
  assert.deepEqual(early, []);
  assert.doesNotMatch(body, /\blet\s/, 'a `let` in createServices binds something late');
  assert.ok(declared.length >= 10);
});
