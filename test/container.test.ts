/**
 * The Dockerfile's steps as the image runs them (scripts/container-steps.sh): build to dist/, migrate, start the
 * compiled server, health check, and a graceful SIGTERM. Only the FROM lines and `npm ci` are not run here.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGLITE_PASS_ONLY, ROOT } from './process-kit.js';

const dataDir = await mkdtemp(join(tmpdir(), 'parley-container-'));
after(() => rm(dataDir, { recursive: true, force: true }));

function step(args: string[], env: Record<string, string>) {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const child = spawn('sh', ['scripts/container-steps.sh', ...args], {
    cwd: ROOT,
    // What the image's ENV sets, except HOST: on this machine servers listen on loopback only.
    env: { ...inherited, NODE_ENV: 'production', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

// Nothing listens on port 1 (privileged, and never handed out as an ephemeral port), so it stays closed.
const CLOSED_PORT = '1';

test('build, migrate, start from dist/, healthy, and a clean exit on SIGTERM', { skip: PGLITE_PASS_ONLY }, async () => {
  const build = step(['build'], {});
  assert.equal(await build.exited, 0, build.output());

  const migrate = step(['migrate'], {});
  assert.equal(await migrate.exited, 0, migrate.output());
  assert.match(migrate.output(), /"msg":"migrations applied"/);

  const unhealthy = step(['health'], { PORT: CLOSED_PORT });
  assert.equal(await unhealthy.exited, 1, 'nothing listens there');
  // Port 0: the server takes a free port and names it in its start line, so no other program can take it between.
  const server = step(['start'], { PORT: '0' });
  let port: string | undefined;
  for (let i = 0; i < 1200 && !port; i++) {
    port = /"msg":"parley started \(role all\) at http:\/\/127\.0\.0\.1:(\d+)\/api/.exec(server.output())?.[1];
    if (!port) await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 100))]);
    assert.equal(server.child.exitCode, null, `the server exited: ${server.output()}`);
  }
  assert.ok(port, `the server named its port: ${server.output()}`);
  const check = step(['health'], { PORT: port });
  assert.equal(await check.exited, 0, `${check.output()}\n${server.output()}`);
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0, server.output());
});
