// The dashboard (web/): its client types generated from the API document, a strict typecheck, and the Vite bundle
// in web/dist/, which the server serves at `/`.
//
//   node scripts/web.mjs build    generate, typecheck and bundle, always (npm run build:web)
//   node scripts/web.mjs ensure   the same, unless web/dist/ was built from the very same sources (npm run build,
//                                 the browser tests)
//   node scripts/web.mjs install  ensure, but a failed build only warns: npm install still installs, and the
//                                 server answers / with how to build (npm install runs this)
//   node scripts/web.mjs missing  build only when there is no bundle at all, and only warn if that fails
//                                 (npm start, on a first start)
//   node scripts/web.mjs types    only the generated client types, web/src/api/schema.gen.ts (editors, dev)
//   node scripts/web.mjs dev      the types, then Vite's dev server with hot reload; /api goes to the running
//                                 server at PARLEY_URL (default http://127.0.0.1:$PORT, PORT 3000)
//
// A field renamed in a route schema changes the generated types, and the typecheck then fails the build.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WEB = join(ROOT, 'web');
const DIST = join(WEB, 'dist');
const STAMP = join(DIST, '.sources-hash');
const TYPES = join(WEB, 'src', 'api', 'schema.gen.ts');
const require = createRequire(import.meta.url);

/** Every file the bundle is made from: the dashboard's sources, the server's (the API document), the lockfile. */
function sourcesHash() {
  const hash = createHash('sha256');
  const skip = new Set([DIST, join(WEB, 'node_modules'), TYPES]);
  const walk = (dir) => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (skip.has(path)) continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.test.ts')) continue;
      else {
        hash.update(relative(ROOT, path));
        hash.update(readFileSync(path));
      }
    }
  };
  walk(WEB);
  walk(join(ROOT, 'src'));
  hash.update(readFileSync(join(ROOT, 'package-lock.json')));
  return hash.digest('hex');
}

class BuildFailed extends Error {}

function run(label, args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new BuildFailed(`dashboard: ${label} failed`);
  return (performance.now() - started) / 1000;
}

function generateTypes() {
  return run('generating the API client types', ['--import', 'tsx', 'scripts/api-document.ts', TYPES]);
}

/** Chunks of builds before the last day's: a page still open from then reloads when it misses one. */
function pruneOldAssets() {
  const assets = join(DIST, 'assets');
  if (!existsSync(assets)) return;
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  for (const file of readdirSync(assets)) {
    if (statSync(join(assets, file)).mtimeMs < dayAgo) rmSync(join(assets, file));
  }
}

async function build() {
  const started = performance.now();
  const hash = sourcesHash();
  const types = generateTypes();
  const typecheck = run('the typecheck (tsc -p web)', [
    require.resolve('typescript/bin/tsc'),
    '-p',
    'web/tsconfig.json',
  ]);
  const bundleStarted = performance.now();
  const vite = await import('vite');
  await vite.build({ configFile: join(WEB, 'vite.config.ts'), logLevel: 'warn' });
  const bundle = (performance.now() - bundleStarted) / 1000;
  pruneOldAssets();
  writeFileSync(STAMP, `${hash}\n`);
  const total = (performance.now() - started) / 1000;
  console.log(
    `dashboard built in web/dist/ in ${total.toFixed(1)} s ` +
      `(client types ${types.toFixed(1)} s, typecheck ${typecheck.toFixed(1)} s, bundle ${bundle.toFixed(1)} s)`,
  );
}

const builtFrom = () => (existsSync(STAMP) ? readFileSync(STAMP, 'utf8').trim() : null);

async function dev() {
  generateTypes();
  const vite = await import('vite');
  const server = await vite.createServer({ configFile: join(WEB, 'vite.config.ts') });
  await server.listen();
  server.printUrls();
}

/** A build whose failure is told but not fatal: the API runs without the dashboard, and / says how to build it. */
async function tolerant(work) {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof BuildFailed)) throw error;
    console.error(
      `${error.message}: the dashboard is not built (the API works without it; / says so).\n` +
        'Fix what is reported above, then run npm run build:web.',
    );
  }
}

const LOCK = join(WEB, '.build-lock');

/** Runs `work` while no other build of this checkout runs (test files build at once when they start). */
async function exclusively(work) {
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(join(LOCK, 'pid'), { encoding: 'utf8', flag: 'a+' }));
      let alive = pid > 0;
      try {
        if (alive) process.kill(pid, 0);
      } catch {
        alive = false;
      }
      if (!alive && Date.now() - statSync(LOCK).mtimeMs > 2000) rmSync(LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

const ensure = () =>
  exclusively(async () => {
    if (builtFrom() === sourcesHash()) console.log('dashboard: web/dist/ is up to date');
    else await build();
  });

const command = process.argv[2];
try {
  if (command === 'build') await exclusively(build);
  else if (command === 'ensure') await ensure();
  else if (command === 'install') await tolerant(ensure);
  else if (command === 'missing') {
    if (!existsSync(join(DIST, 'index.html'))) {
      console.log('dashboard: no bundle in web/dist/ yet, building it once (npm run build:web rebuilds it)');
      await tolerant(() => exclusively(build));
    }
  } else if (command === 'types') generateTypes();
  else if (command === 'dev') await dev();
  else {
    console.error('usage: node scripts/web.mjs build|ensure|install|missing|types|dev');
    process.exit(2);
  }
} catch (error) {
  if (!(error instanceof BuildFailed)) throw error;
  console.error(error.message);
  process.exit(1);
}
