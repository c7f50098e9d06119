/**
 * What the request log shows of a request: a signed recording or transcript URL is a credential (whoever holds it
 * may fetch the asset), so its signature is redacted there, as the Authorization and Cookie headers are.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { asKey, buildTestApp, call, signUp, type TestApp } from './helpers.js';
import { insertCall } from './factories/calls.js';
import { loggingApp } from './log-capture.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

async function signedUrls() {
  const owner = await signUp(t.app);
  const { id } = await insertCall(t.infra.database.db, owner.accountId, { recordingStorageKey: 'recordings/none.wav' });
  return Promise.all(
    ['recording', 'transcript'].map(async (asset) => {
      const answer = await call(asKey(owner), 'GET', `/calls/${id}/asset-url?asset=${asset}`);
      assert.equal(answer.statusCode, 200, answer.body);
      const url = new URL(answer.json().url);
      return { path: url.pathname + url.search, signature: url.searchParams.get('signature')! };
    }),
  );
}

for (const [name, level, logRequests] of [
  ['at debug', 'debug', false],
  ['at info with LOG_REQUESTS=true', 'info', true],
] as const) {
  test(`signed URLs are logged without their signature, ${name}`, async () => {
    const logged = await loggingApp(t, { level, config: { logRequests } });
    try {
      const urls = await signedUrls();
      const secret = 'f'.repeat(64);
      const paths = [
        ...urls.map(({ path }) => path),
        // However the parameter is spelled or encoded, and on a route that does not exist.
        `/api/v1/calls/${'0'.repeat(8)}-0000-4000-8000-000000000000/transcript.json?expires=1&Signature=${secret}`,
        `/api/v1/calls/x/transcript.json?sig%6Eature=${secret}&expires=1`,
        `/api/v1/nowhere?signature=${secret}`,
      ];
      for (const url of paths) await logged.app.inject({ method: 'GET', url });

      const requests = logged.lines().filter((line) => line.msg === 'incoming request');
      assert.equal(requests.length, paths.length, 'every request is logged');
      for (const line of requests) assert.match(line.req?.url ?? '', /ature=\[redacted\]/, line.req?.url);
      for (const signature of [...urls.map((url) => url.signature), secret]) {
        assert.ok(!logged.raw.some((line) => line.includes(signature)), 'no signature in the log');
      }
      // The rest of the URL stays, to tell requests apart.
      assert.ok(requests.some((line) => line.req?.url === urls[0]!.path.replace(urls[0]!.signature, '[redacted]')));
    } finally {
      await logged.close();
    }
  });
}
