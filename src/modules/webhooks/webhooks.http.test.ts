/**
 * The sender on its own, against real HTTP servers on 127.0.0.1 that misbehave in the ways a receiver can: what an
 * attempt answers for each status, the response excerpt (1 KB, a cut character dropped, NUL bytes removed), a large
 * response cut off without spoiling the next delivery, the connection kept for the next delivery when the answer is
 * read whole, a body cut off after the status, and the one limit on the whole attempt (a receiver that never answers,
 * one that answers the status and then stalls or trickles its body, a name that never resolves). The senders run on a
 * time the tests move: an attempt runs out when a test says so, never because the machine was slow.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWebhookSender, type Lookup, type WebhookSender } from './webhooks.http.js';

const TIMEOUT_MS = 300;
const servers: Server[] = [];
const senders: WebhookSender[] = [];
/** The senders' time, in milliseconds: it moves only when a test moves it. */
let senderTime = 0;

/** Waits until `check` holds (the network's work happens in its own time). */
async function until(what: string, check: () => boolean) {
  for (let i = 0; i < 3000 && !check(); i++) await sleep(10);
  assert.ok(check(), `gave up waiting for ${what}`);
}

after(async () => {
  for (const sender of senders) await sender.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A receiver that reads each request whole, then lets `answer` respond; counts requests and connections. */
async function serve(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => answer(req, res));
  });
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests: () => requests,
    connections: () => sockets.size,
  };
}

function sender(options: { timeoutMs?: number; allowPrivate?: boolean; lookup?: Lookup } = {}) {
  const created = createWebhookSender({
    allowHttp: true,
    allowPrivate: options.allowPrivate ?? true,
    now: () => senderTime,
    ...options,
  });
  senders.push(created);
  return created;
}

const post = (s: WebhookSender, url: string) => s.post(url, { 'content-type': 'application/json' }, '{"a":1}');

test('a 2xx is a success with the first 1 KB of the answer; a cut character at the end is dropped, NUL bytes removed', async () => {
  // 1,023 bytes, then a 3-byte character across the 1 KB mark, then more.
  const body = Buffer.concat([Buffer.from('a\0b'), Buffer.alloc(1020, 'x'), Buffer.from('€ and more')]);
  const target = await serve((_req, res) => res.writeHead(201).end(body));
  const result = await post(sender(), target.url);
  assert.equal(result.ok, true);
  assert.equal(result.statusCode, 201);
  assert.equal(result.error, null);
  assert.equal(result.responseExcerpt, `ab${'x'.repeat(1020)}`);
  assert.equal(typeof result.latencyMs, 'number');
});

test('other statuses fail as "HTTP <status>" with the excerpt; a redirect is never followed', async () => {
  let redirected = 0;
  const elsewhere = await serve((_req, res) => {
    redirected++;
    res.end('followed');
  });
  const target = await serve((req, res) => {
    if (req.url === '/gone') res.writeHead(410).end('gone for good');
    else if (req.url === '/hinted') {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      res.writeHead(200).end('after the hints');
    } else if (req.url === '/moved') res.writeHead(302, { location: elsewhere.url }).end();
    else res.writeHead(307).end();
  });
  const s = sender();
  const base = target.url.replace('/hook', '');
  assert.deepEqual(
    { ...(await post(s, `${base}/gone`)), latencyMs: 0 },
    { ok: false, statusCode: 410, latencyMs: 0, error: 'HTTP 410', responseExcerpt: 'gone for good', timedOut: false },
  );
  // An informational answer before the real one is passed over.
  const hinted = await post(s, `${base}/hinted`);
  assert.equal(hinted.ok, true);
  assert.equal(hinted.statusCode, 200);
  assert.equal(hinted.responseExcerpt, 'after the hints');
  const moved = await post(s, `${base}/moved`);
  assert.equal(moved.ok, false);
  assert.equal(moved.statusCode, 302);
  assert.equal(moved.error, `redirect to ${elsewhere.url} not followed`);
  assert.equal((await post(s, `${base}/nowhere`)).error, 'redirect to nowhere not followed');
  assert.equal(redirected, 0);
});

test('an answer over 64 KB is cut off, counted by its status, and the next delivery to the endpoint goes through', async () => {
  const big = Buffer.alloc(4 * 1024 * 1024, 'y');
  const target = await serve((req, res) => {
    if (req.url === '/big') res.writeHead(200).end(big);
    else if (req.url === '/big-close') res.writeHead(202, { connection: 'close' }).end(big.subarray(0, 200 * 1024));
    else if (req.url === '/big-chunked') {
      res.writeHead(500);
      for (let i = 0; i < 64; i++) res.write(big.subarray(0, 64 * 1024));
      res.end();
    } else res.end('small');
  });
  const s = sender();
  const base = target.url.replace('/hook', '');
  for (const [path, status] of [
    ['/big', 200],
    ['/big-close', 202],
    ['/big-chunked', 500],
  ] as const) {
    const cut = await post(s, `${base}${path}`);
    assert.equal(cut.statusCode, status, path);
    assert.equal(cut.ok, status < 300, path);
    assert.equal(cut.responseExcerpt, 'y'.repeat(1024), path);
    const next = await post(s, target.url);
    assert.equal(next.ok, true, path);
    assert.equal(next.responseExcerpt, 'small', path);
  }
});

test('an answer up to 64 KB is read whole, so later deliveries reuse the connection', async () => {
  const answer = Buffer.alloc(60 * 1024, 'z');
  const target = await serve((_req, res) => res.end(answer));
  const s = sender();
  const check = async () => {
    const result = await post(s, target.url);
    assert.equal(result.ok, true);
    assert.equal(result.responseExcerpt, 'z'.repeat(1024));
  };
  // undici opens a second connection for the second request in a row; from then on they are reused.
  await check();
  await check();
  const opened = target.connections();
  for (let i = 0; i < 4; i++) await check();
  assert.equal(target.requests(), 6);
  assert.equal(target.connections(), opened);
});

test('a body cut off after the status still counts by its status', async () => {
  const target = await serve((req, res) => {
    res.writeHead(req.url === '/fail' ? 503 : 200, { 'content-length': '1000' });
    res.write('partial answer');
    setTimeout(() => res.socket?.destroy(), 20);
  });
  const s = sender();
  const ok = await post(s, target.url);
  assert.equal(ok.ok, true);
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.error, null);
  assert.equal(ok.responseExcerpt, 'partial answer');
  const failed = await post(s, target.url.replace('/hook', '/fail'));
  assert.equal(failed.ok, false);
  assert.equal(failed.statusCode, 503);
  assert.equal(failed.error, 'HTTP 503');
});

test('a receiver that never answers times out after the attempt limit', async () => {
  const target = await serve(() => {});
  const s = sender({ timeoutMs: TIMEOUT_MS });
  const result = post(s, target.url);
  await until('the request to arrive', () => target.requests() === 1);
  senderTime += TIMEOUT_MS - 1;
  await sleep(50);
  assert.deepEqual(s.underWay(), [null], 'still under way just before the limit');
  senderTime += 1;
  const answered = await result;
  assert.equal(answered.ok, false);
  assert.equal(answered.statusCode, null);
  assert.equal(answered.error, `timed out after ${TIMEOUT_MS / 1000} s`);
  assert.equal(answered.timedOut, true, 'a timeout is told apart (the penalty lane takes its endpoint)');
  assert.equal(answered.responseExcerpt, null);
  assert.equal(answered.latencyMs, TIMEOUT_MS);
});

test('the limit is on the whole attempt: a body that stalls or trickles after the status ends the attempt at the limit, counted by its status', async () => {
  const target = await serve((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('started');
    if (req.url === '/trickle') {
      // A byte every 10 ms: never quiet long enough for a per-read timeout.
      const timer = setInterval(() => res.write('.'), 10);
      res.on('close', () => clearInterval(timer));
    }
  });
  const s = sender({ timeoutMs: TIMEOUT_MS });
  for (const path of ['/stall', '/trickle']) {
    const result = post(s, target.url.replace('/hook', path));
    await until(`the status of ${path}`, () => s.underWay()[0] === 200);
    senderTime += TIMEOUT_MS;
    const answered = await result;
    assert.equal(answered.statusCode, 200, path);
    assert.equal(answered.ok, true, path);
    assert.equal(answered.timedOut, false, `${path}: an answer that came is no timeout`);
    assert.match(String(answered.responseExcerpt), /^started\.*$/, path);
    assert.equal(answered.latencyMs, TIMEOUT_MS, path);
  }
  // The cut-off connections are not reused: a later delivery gets an answer.
  const fresh = await serve((_req, res) => res.end('fine'));
  assert.equal((await post(s, fresh.url)).responseExcerpt, 'fine');
});

test('attempts under way together each keep their own limit: the silent ones time out, the others are answered', async () => {
  const target = await serve((req, res) => {
    if (req.url === '/fast') res.end('fast');
  });
  const s = sender({ timeoutMs: TIMEOUT_MS });
  const base = target.url.replace('/hook', '');
  const pending = ['/silent', '/fast', '/silent', '/fast', '/fast', '/silent'].map((path) => post(s, `${base}${path}`));
  await until('the answered attempts to end', () => target.requests() === 6 && s.underWay().length === 3);
  senderTime += TIMEOUT_MS;
  const results = await Promise.all(pending);
  assert.deepEqual(
    results.map((r) => r.error ?? r.responseExcerpt),
    ['timed out', 'fast', 'timed out', 'fast', 'fast', 'timed out'].map((what) =>
      what === 'fast' ? what : `timed out after ${TIMEOUT_MS / 1000} s`,
    ),
  );
  // A later attempt starts its own time afresh.
  assert.equal((await post(s, `${base}/fast`)).responseExcerpt, 'fast');
});

test('a host name that never resolves times out after the attempt limit', async () => {
  // The lookup answers only once the attempt has ended (then with an error, so the connection attempt ends too).
  const unanswered: Array<(error: NodeJS.ErrnoException) => void> = [];
  const late: Lookup = (_hostname, _options, callback) => unanswered.push((error) => callback(error, [], 0));
  const s = sender({ timeoutMs: TIMEOUT_MS, allowPrivate: false, lookup: late });
  const result = post(s, 'http://never.example/hook');
  await until('the lookup to start', () => unanswered.length === 1);
  senderTime += TIMEOUT_MS;
  const answered = await result;
  assert.equal(answered.ok, false);
  assert.equal(answered.statusCode, null);
  assert.equal(answered.error, `timed out after ${TIMEOUT_MS / 1000} s`);
  assert.equal(answered.timedOut, true);
  for (const answer of unanswered) answer(Object.assign(new Error('never.example'), { code: 'ENOTFOUND' }));
});

test('refusals and connection errors are answers, not exceptions', async () => {
  const s = sender({ allowPrivate: false });
  assert.equal((await post(s, 'not a URL')).error, 'target refused: the URL is not valid');
  assert.equal((await post(s, 'ftp://93.184.215.14/hook')).error, 'target refused: the URL scheme is not allowed');
  assert.equal((await post(s, 'http://[::1]:9/hook')).error, 'target refused: ::1 is a private or reserved address');
  // The same URL again answers the same (its check is kept, not skipped).
  assert.equal((await post(s, 'http://[::1]:9/hook')).error, 'target refused: ::1 is a private or reserved address');
  const closed = await serve(() => {});
  const port = closed.port;
  await new Promise((resolve) => servers.pop()!.close(resolve));
  const refused = await post(sender(), `http://127.0.0.1:${port}/hook`);
  assert.equal(refused.error, 'connection refused');
  assert.equal(refused.timedOut, false);
});
