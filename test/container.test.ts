/**
 * The Dockerfile's steps as the image runs them (scripts/container-steps.sh): build to dist/, migrate, start the
 * compiled server, health check, and a graceful SIGTERM. Only the FROM lines and `npm ci` are not run here.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dataDir = await mkdtemp(join(tmpdir(), 'parley-container-'));
after(() => rm(dataDir, { recursive: true, force: true }));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

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

test('build, migrate, start from dist/, healthy, and a clean exit on SIGTERM', async () => {
  const port = String(await freePort());
  const build = step(['build'], {});
  assert.equal(await build.exited, 0, build.output());

  const migrate = step(['migrate'], {});
  assert.equal(await migrate.exited, 0, migrate.output());
  assert.match(migrate.output(), /"msg":"migrations applied"/);

  const server = step(['start'], { PORT: port });
  const unhealthy = step(['health'], { PORT: String(await freePort()) });
  assert.equal(await unhealthy.exited, 1, 'nothing listens there');
  let healthy = false;
  for (let i = 0; i < 600 && !healthy; i++) {
    const check = step(['health'], { PORT: port });
    healthy = (await check.exited) === 0;
    if (!healthy) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.ok(healthy, server.output());
  assert.match(server.output(), /"msg":"parley started \(role all\) at http:\/\/127\.0\.0\.1:\d+\/api/);
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0, server.output());
});
