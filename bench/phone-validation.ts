/**
 * Phone validation: µs of CPU per number for `normalizePhone` against the plain library, in the same process.
 *
 *   npx tsx bench/phone-validation.ts
 *
 * Three ways of normalizing the same numbers, in alternating windows (A B C C B A …, so drift and load spread over
 * all three):
 * - plain: the normalization on libphonenumber-js `max` as published (its ES build: a RegExp built from pattern text
 *   on every match), no fast path. The baseline: what an import paid before;
 * - cached: the library's CommonJS build with its matching helper replaced by one that keeps each compiled pattern;
 * - cached + fast path: what `normalizePhone` does (well-formed North American numbers answered on the same
 *   metadata without the library's general parse).
 * Two mixes: "import" (as bench/contacts-import.ts writes them: mostly US numbers in assorted writings, 10%
 * international, 2% junk) and "every country" (test/phone-corpus.ts: every country's numbers, valid and not).
 * Each window normalizes the whole mix once; reported per way: µs of process CPU per number, min/median/max over
 * the windows, the wall-clock median, and the ratio to plain; the load average before and after.
 *
 * Env: WINDOWS per way (15), IMPORT_ROWS (20000).
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import * as plainLibrary from 'libphonenumber-js/max';
import { compiledPatterns, createPhoneNormalizer, normalizePhone, phoneLibrary } from '../src/lib/phone.js';
import { phoneCorpus, type PhoneCase } from '../test/phone-corpus.js';

const WINDOWS = Number(process.env.WINDOWS ?? 15);
const IMPORT_ROWS = Number(process.env.IMPORT_ROWS ?? 20_000);

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' / ');

const AREAS = ['212', '415', '312', '617', '206', '303', '512', '646', '718', '404'];
const WRITINGS = [
  (a: string, e: string, l: string) => `(${a}) ${e}-${l}`,
  (a: string, e: string, l: string) => `+1 ${a} ${e} ${l}`,
  (a: string, e: string, l: string) => `${a}.${e}.${l}`,
  (a: string, e: string, l: string) => `+1${a}${e}${l}`,
  (a: string, e: string, l: string) => `${a}-${e}-${l}`,
];

/** Row i's phone as bench/contacts-import.ts writes it: mostly US, some UK and German mobiles, ~2% junk. */
function importPhone(i: number): string {
  if (i % 50 === 7) return i % 100 === 7 ? 'n/a' : `555-01${i % 10}`;
  if (i % 20 === 3)
    return i % 40 === 3
      ? `+44 7911 ${String(i % 1000000).padStart(6, '0')}`
      : `+49 151 2${String(i % 10000000).padStart(7, '0')}`;
  const j = Math.floor(i / 1000);
  return WRITINGS[i % WRITINGS.length]!(
    AREAS[j % 10]!,
    String(234 + Math.floor(j / 10)),
    String(i % 10000).padStart(4, '0'),
  );
}

type Normalize = (input: string, defaultCountry: string) => unknown;
const ways: Array<[string, Normalize]> = [
  ['plain', createPhoneNormalizer(plainLibrary, { northAmericanFastPath: false })],
  ['cached', createPhoneNormalizer(phoneLibrary, { northAmericanFastPath: false })],
  ['cached + fast path', normalizePhone],
];

function window(normalize: Normalize, cases: PhoneCase[]) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  let sink = 0;
  for (const { input, defaultCountry } of cases) if (normalize(input, defaultCountry)) sink++;
  const used = process.cpuUsage(cpu);
  if (sink !== cases.length) throw new Error('a number went unanswered');
  return {
    cpuUs: (used.user + used.system) / cases.length,
    wallUs: ((performance.now() - started) * 1000) / cases.length,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function measure(name: string, cases: PhoneCase[]) {
  for (const [, normalize] of ways) window(normalize, cases.slice(0, 2000)); // warm-up
  const results = new Map(ways.map(([way]) => [way, { cpu: [] as number[], wall: [] as number[] }]));
  for (let round = 0; round < WINDOWS; round++) {
    const order = round % 2 === 0 ? ways : [...ways].reverse();
    for (const [way, normalize] of order) {
      const { cpuUs, wallUs } = window(normalize, cases);
      results.get(way)!.cpu.push(cpuUs);
      results.get(way)!.wall.push(wallUs);
    }
  }
  console.log(`${name}: ${cases.length} numbers a window, ${WINDOWS} windows per way; load ${load()}`);
  const baseline = median(results.get('plain')!.cpu);
  for (const [way, { cpu, wall }] of results) {
    const cpuMedian = median(cpu);
    console.log(
      `  ${way.padEnd(18)} CPU µs/number median ${cpuMedian.toFixed(2)} (min ${Math.min(...cpu).toFixed(2)}, max ${Math.max(...cpu).toFixed(2)}); wall median ${median(wall).toFixed(2)}; ${(baseline / cpuMedian).toFixed(2)}× plain`,
    );
  }
}

console.log(`phone validation (libphonenumber-js max); compiled-pattern cache in effect: ${compiledPatterns.inEffect}`);
measure(
  'import mix',
  Array.from({ length: IMPORT_ROWS }, (_, i) => ({ input: importPhone(i), defaultCountry: 'US' })),
);
measure('every country', phoneCorpus());
console.log(`  patterns kept compiled: ${compiledPatterns.kept}; load ${load()}`);
