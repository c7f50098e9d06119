/**
 * What the API document costs: generating it (once per process, then cached), linting it with Redocly's
 * recommended-strict rules, and generating client types from it with openapi-typescript (the two checks in
 * test/openapi*.test.ts). The baseline is a JSON round trip of the same document (parse + stringify), the least
 * any consumer of it does; medians of RUNS (default 5) with ratios against it.
 *
 *   npx tsx bench/openapi-document.ts
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { buildTestApp } from '../test/helpers.js';

const RUNS = Number(process.env.RUNS ?? 5);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function time(run: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  return median(times);
}

const fromCli = createRequire(createRequire(import.meta.url).resolve('@redocly/cli/package.json'));
const redocly: typeof import('@redocly/openapi-core') = await import(
  pathToFileURL(fromCli.resolve('@redocly/openapi-core')).href
);

// Each build is a new app, so the first app.swagger() call really generates the document.
const generations: number[] = [];
let text = '';
for (let i = 0; i < Math.min(RUNS, 3); i++) {
  const t = await buildTestApp();
  const start = performance.now();
  text = JSON.stringify(t.app.swagger());
  generations.push(performance.now() - start);
  await t.close();
}
const generate = median(generations);
const baseline = await time(() => JSON.stringify(JSON.parse(text)));
const config = await redocly.createConfig({ extends: ['recommended-strict'] });
const lint = await time(() => redocly.lintFromString({ source: text, absoluteRef: 'openapi.json', config }));
const types = await time(async () => astToString(await openapiTS(JSON.parse(text))));

const doc = JSON.parse(text);
const operations = Object.values<Record<string, unknown>>(doc.paths).reduce(
  (n, item) => n + Object.keys(item).length,
  0,
);
console.log(
  `document: ${operations} operations, ${Object.keys(doc.components.schemas).length} named schemas, ${text.length} bytes`,
);
const rows: Array<[string, number]> = [
  ['JSON round trip (baseline)', baseline],
  ['generate (first app.swagger())', generate],
  ['Redocly recommended-strict lint', lint],
  ['openapi-typescript types', types],
];
for (const [name, ms] of rows)
  console.log(`${name.padEnd(34)} ${ms.toFixed(1).padStart(8)} ms  x${(ms / baseline).toFixed(0)}`);
