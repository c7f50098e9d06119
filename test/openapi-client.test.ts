/**
 * A client generated from the API document needs no hand-written types: openapi-typescript generates them from
 * the live document, the README tour (test/fixtures/openapi-tour/tour.ts) typechecks against them with
 * `tsc --strict`, then runs through openapi-fetch against the running service.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import openapiTS, { astToString } from 'openapi-typescript';
import { buildTestApp, type TestApp } from './helpers.js';

const TOUR = fileURLToPath(new URL('./fixtures/openapi-tour/tour.ts', import.meta.url));
const NODE_MODULES = fileURLToPath(new URL('../node_modules', import.meta.url));

/** What the tour answers (declared here: the tour's own types exist only beside the generated ones). */
type RunTour = (
  baseUrl: string,
  email: string,
) => Promise<{
  version: number;
  agentNames: string[];
  imported: number;
  adaPhone: string;
  callStatus: string;
  callIds: string[];
  placedCallId: string;
  invalidFields: string[];
}>;

let t: TestApp;
let dir: string;
let baseUrl: string;
before(async () => {
  t = await buildTestApp();
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `${address}/api`;
  dir = mkdtempSync(join(tmpdir(), 'parley-openapi-client-'));
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  writeFileSync(join(dir, 'parley-api.d.ts'), astToString(await openapiTS(doc)));
  copyFileSync(TOUR, join(dir, 'tour.ts'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(NODE_MODULES, join(dir, 'node_modules'), 'dir');
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the tour uses the generated types as they are: no casts, no any', () => {
  const source = readFileSync(TOUR, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
  assert.doesNotMatch(source, /\bas\s+(?!const\b)[A-Za-z{[(]/, 'a type assertion');
  assert.doesNotMatch(source, /\bany\b|@ts-|[=(,:]\s*<[A-Za-z]/, 'an any, an angle-bracket cast or a suppressed error');
});

test('the tour typechecks against the generated types with tsc --strict', () => {
  const program = ts.createProgram([join(dir, 'tour.ts')], {
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: false,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    // A browser's view of the world: the tour needs fetch's types, not Node's (and DOM's load faster).
    types: [],
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    noEmit: true,
    skipLibCheck: true,
  });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const report = ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => dir,
    getNewLine: () => '\n',
  });
  assert.equal(diagnostics.length, 0, report);
});

test('the tour runs through openapi-fetch against the service', async () => {
  const { runTour }: { runTour: RunTour } = await import(pathToFileURL(join(dir, 'tour.ts')).href);
  const result = await runTour(baseUrl, 'ada@example.com');
  assert.equal(result.version, 2, 'saving a prompt part made version 2');
  assert.deepEqual(result.agentNames, ['Appointment setter']);
  assert.equal(result.imported, 1);
  assert.equal(result.adaPhone, '+14155552671');
  assert.ok(result.placedCallId);
  assert.ok(
    ['queued', 'dialing', 'ringing', 'connected', 'completed', 'failed', 'busy', 'no_answer'].includes(
      result.callStatus,
    ),
  );
  assert.deepEqual(result.invalidFields, ['body/name']);
});
