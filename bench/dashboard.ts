/**
 * The dashboard's build time and the JavaScript a first visit downloads (what index.html loads before any page:
 * the entry script and the chunks it preloads), gzipped at level 9 as the server sends it, against the 250 KB
 * budget. Pages load their own chunks when opened (route-level code splitting); those are listed too.
 *
 *   npx tsx bench/dashboard.ts            builds (npm run build:web), then measures web/dist/
 *   SKIP_BUILD=1 npx tsx bench/dashboard.ts   measures the bundle as it is
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'web', 'dist');
const BUDGET_KB = 250;
const kb = (bytes: number) => bytes / 1024;
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

let buildLine = '(not built: SKIP_BUILD=1)';
const loadBefore = load();
if (process.env.SKIP_BUILD !== '1') {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['scripts/web.mjs', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`the build failed:\n${result.stdout}${result.stderr}`);
  buildLine = `${((performance.now() - started) / 1000).toFixed(1)} s in all; ${result.stdout.trim().split('\n').at(-1)}`;
}

const index = readFileSync(join(DIST, 'index.html'), 'utf8');
const initial = [
  ...index.matchAll(/<script[^>]+src="\/([^"]+\.js)"/g),
  ...index.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="\/([^"]+\.js)"/g),
].map((match) => match[1]!);
const css = [...index.matchAll(/<link[^>]+rel="stylesheet"[^>]+href="\/([^"]+\.css)"/g)].map((match) => match[1]!);
const sizes = (files: string[]) =>
  files.reduce(
    (sum, file) => {
      const body = readFileSync(join(DIST, file));
      return {
        raw: sum.raw + body.length,
        gzip: sum.gzip + gzipSync(body, { level: 9 }).length,
        br: sum.br + brotliCompressSync(body).length,
      };
    },
    { raw: 0, gzip: 0, br: 0 },
  );
const entry = sizes(initial);
const styles = sizes(css);
// The current build's files (web/dist/assets also keeps the previous builds' chunks for a day).
const manifest = JSON.parse(readFileSync(join(DIST, '.vite', 'manifest.json'), 'utf8')) as Record<
  string,
  { file: string }
>;
const allJs = [...new Set(Object.values(manifest).map((chunk) => chunk.file))].filter((file) => file.endsWith('.js'));
const every = sizes(allJs);

console.log(`load average before: ${loadBefore}; after: ${load()}`);
console.log(`build: ${buildLine}`);
console.log(
  `initial JS (${initial.length} file(s)): ${kb(entry.raw).toFixed(1)} KB raw, ${kb(entry.gzip).toFixed(1)} KB gzip, ${kb(entry.br).toFixed(1)} KB brotli`,
);
console.log(`  = ${(kb(entry.gzip) / BUDGET_KB).toFixed(2)} of the ${BUDGET_KB} KB gzip budget`);
console.log(`initial CSS: ${kb(styles.raw).toFixed(1)} KB raw, ${kb(styles.gzip).toFixed(1)} KB gzip`);
console.log(`every JS chunk of the build (${allJs.length}): ${kb(every.gzip).toFixed(1)} KB gzip`);
