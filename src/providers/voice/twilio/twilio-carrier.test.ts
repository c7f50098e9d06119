/**
 * The REST client, status callbacks and the Media Streams socket against the local Twilio-compatible carrier
 * (test/fixtures/twilio-server.ts): the application side here is a plain HTTP + WebSocket server built from this
 * folder's pieces.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { startFakeTwilio, type FakeTwilio } from '../../../../test/fixtures/twilio-server.js';
import { isProviderError } from '../../provider-error.js';
import { callProgressFromStatusCallback } from './call-status.js';
import {
  type CarrierStreamMessage,
  clearMessage,
  encodeStreamMessage,
  mediaPayload,
  outboundMark,
  outboundMedia,
  parseCarrierMessage,
} from './media-stream-messages.js';
import { TWILIO_SIGNATURE_HEADER, verifyFormSignature } from './request-signature.js';
import { createTwilioRestClient, TwilioApiError } from './rest-client.js';
import { connectStreamTwiml, hangupTwiml } from './twiml.js';

interface ReceivedCallback {
  url: string;
  params: Record<string, string>;
  signature: string;
  verified: boolean;
}

/** Resolves waiters when a condition over recorded data comes true. */
function conditions() {
  const waiters: { check: () => boolean; resolve: () => void }[] = [];
  return {
    changed() {
      for (const waiter of [...waiters]) {
        if (waiter.check()) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    },
    until(check: () => boolean): Promise<void> {
      if (check()) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ check, resolve }));
    },
  };
}

async function readForm(request: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

/** The application: status callbacks, a voice URL answering Hangup, and a Media Streams endpoint. */
async function startApp(t: TestContext, authToken: string) {
  const callbacks: ReceivedCallback[] = [];
  const voiceFetches: ReceivedCallback[] = [];
  const stream: { received: CarrierStreamMessage[]; invalid: string[]; handshakeVerified: boolean | null } = {
    received: [],
    invalid: [],
    handshakeVerified: null,
  };
  const waits = conditions();
  let baseUrl = '';

  const server = createServer(async (request, response) => {
    const url = `${baseUrl}${request.url}`;
    const params = await readForm(request);
    const signature = String(request.headers[TWILIO_SIGNATURE_HEADER] ?? '');
    const received = { url, params, signature, verified: verifyFormSignature(authToken, url, params, signature) };
    if (request.url?.startsWith('/voice')) {
      voiceFetches.push(received);
      response.writeHead(received.verified ? 200 : 403, { 'content-type': 'text/xml' }).end(hangupTwiml());
    } else {
      callbacks.push(received);
      response.writeHead(received.verified ? 204 : 403).end();
    }
    waits.changed();
  });
  const sockets = new WebSocketServer({ server, path: '/stream' });
  sockets.on('connection', (socket, request) => {
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}${request.url}`;
    stream.handshakeVerified = verifyFormSignature(
      authToken,
      url,
      {},
      String(request.headers[TWILIO_SIGNATURE_HEADER]),
    );
    socket.on('message', (data) => {
      const parsed = parseCarrierMessage(data.toString());
      if (!parsed.ok) {
        stream.invalid.push(parsed.error);
        waits.changed();
        return;
      }
      const message = parsed.message;
      stream.received.push(message);
      // The agent's side: greet with three frames and a mark once the stream starts; stop talking on a key press.
      if (message.event === 'start') {
        for (let i = 0; i < 3; i++) {
          socket.send(encodeStreamMessage(outboundMedia(message.streamSid, new Uint8Array(160).fill(0x20 + i))));
        }
        socket.send(encodeStreamMessage(outboundMark(message.streamSid, 'greeting')));
      }
      if (message.event === 'dtmf') socket.send(encodeStreamMessage(clearMessage(message.streamSid)));
      waits.changed();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.after(async () => {
    for (const client of sockets.clients) client.terminate();
    sockets.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { baseUrl, streamUrl: baseUrl.replace('http:', 'ws:'), callbacks, voiceFetches, stream, until: waits.until };
}

async function carrier(t: TestContext, options: Parameters<typeof startFakeTwilio>[0] = {}): Promise<FakeTwilio> {
  const fake = await startFakeTwilio(options);
  t.after(() => fake.close());
  return fake;
}

const clientFor = (fake: FakeTwilio, authToken = fake.authToken) =>
  createTwilioRestClient({ accountSid: fake.accountSid, authToken, baseUrl: fake.baseUrl });

test('a call: signed status callbacks verify, and the stream carries audio, DTMF, marks and clear both ways', async (t) => {
  const fake = await carrier(t);
  const app = await startApp(t, fake.authToken);
  const client = clientFor(fake);

  const created = await client.createCall({
    to: '+14155550100',
    from: '+14155550199',
    twiml: connectStreamTwiml({ url: `${app.streamUrl}/stream?call=c_1`, parameters: { callId: 'c_1', note: 'a&b' } }),
    statusCallback: `${app.baseUrl}/status?call=c_1`,
    timeoutSeconds: 25,
    machineDetection: 'Enable',
  });
  assert.match(created.sid, /^CA[0-9a-f]{32}$/);
  assert.equal(created.status, 'queued');
  const call = fake.calls.get(created.sid)!;
  assert.deepEqual(call.form.getAll('StatusCallbackEvent'), ['initiated', 'ringing', 'answered', 'completed']);
  assert.equal(call.form.get('Timeout'), '25');
  assert.equal(call.form.get('MachineDetection'), 'Enable');

  // The far end talks, then presses 5; the app answers the key press with clear.
  await call.until((c) => c.streamReceived.some((message) => message.event === 'clear'));
  await app.until(() => app.stream.received.some((message) => message.event === 'mark'));
  await client.hangUpCall(created.sid);
  await app.until(() => app.callbacks.some((callback) => callback.params.CallStatus === 'completed'));
  await app.until(() => app.stream.received.some((message) => message.event === 'stop'));

  // Callbacks: every one signed and verified, in order, and read as Parley's progress.
  assert.deepEqual(
    app.callbacks.map((callback) => callback.params.CallStatus),
    ['initiated', 'ringing', 'in-progress', 'completed'],
  );
  assert.ok(app.callbacks.every((callback) => callback.verified));
  assert.ok(call.callbacks.every((sent) => sent.answeredStatus === 204));
  assert.deepEqual(
    app.callbacks.map((callback) => {
      const update = callProgressFromStatusCallback(callback.params);
      return update.phase === 'invalid' ? update.message : update.status;
    }),
    ['dialing', 'ringing', 'connected', 'completed'],
  );
  const answered = callProgressFromStatusCallback(app.callbacks[2]!.params);
  assert.ok(answered.phase === 'live' && answered.status === 'connected' && answered.answeredBy === 'human');

  // A tampered callback does not verify: another status, another URL, or another token.
  const completed = app.callbacks[3]!;
  assert.equal(
    verifyFormSignature(
      fake.authToken,
      completed.url,
      { ...completed.params, CallStatus: 'busy' },
      completed.signature,
    ),
    false,
  );
  assert.equal(
    verifyFormSignature(fake.authToken, completed.url.replace('c_1', 'c_2'), completed.params, completed.signature),
    false,
  );
  assert.equal(verifyFormSignature('another-token', completed.url, completed.params, completed.signature), false);

  // From the carrier: connected, start with our parameters, every frame of audio byte for byte, the key, the mark, stop.
  assert.equal(app.stream.handshakeVerified, true);
  assert.deepEqual(app.stream.invalid, []);
  const events = app.stream.received.map((message) => message.event);
  assert.deepEqual(events.slice(0, 2), ['connected', 'start']);
  assert.equal(events.at(-1), 'stop');
  const start = app.stream.received[1]!;
  assert.ok(start.event === 'start');
  assert.deepEqual(start.start.customParameters, { callId: 'c_1', note: 'a&b' });
  assert.equal(start.start.callSid, created.sid);
  assert.deepEqual(start.start.mediaFormat, { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });
  const heard = app.stream.received.flatMap((message) => (message.event === 'media' ? [mediaPayload(message)] : []));
  assert.equal(heard.length, 10);
  assert.deepEqual(heard, call.sentFrames);
  const dtmf = app.stream.received.find((message) => message.event === 'dtmf');
  assert.ok(dtmf?.event === 'dtmf' && dtmf.dtmf.digit === '5');
  const mark = app.stream.received.find((message) => message.event === 'mark');
  assert.ok(mark?.event === 'mark' && mark.mark.name === 'greeting');

  // To the carrier: the three frames, the mark and clear, all in the documented shape.
  assert.deepEqual(call.invalidReceived, []);
  assert.deepEqual(
    call.streamReceived.map((message) => message.event),
    ['media', 'media', 'media', 'mark', 'clear'],
  );
  const played = call.streamReceived.flatMap((message) => (message.event === 'media' ? [mediaPayload(message)] : []));
  assert.deepEqual(
    played.map((frame) => [frame.length, frame[0]]),
    [
      [160, 0x20],
      [160, 0x21],
      [160, 0x22],
    ],
  );
});

test('a busy line and a failed number end with their outcome; only the events asked for are posted', async (t) => {
  const fake = await carrier(t, {
    farEnd: (to) => ({ outcome: to.endsWith('6') ? 'busy' : to.endsWith('9') ? 'failed' : 'answer' }),
  });
  const app = await startApp(t, fake.authToken);
  const client = clientFor(fake);

  const busy = await client.createCall({
    to: '+14155550106',
    from: '+14155550199',
    twiml: hangupTwiml(),
    statusCallback: `${app.baseUrl}/status?call=busy`,
  });
  await app.until(() =>
    app.callbacks.some((callback) => callback.params.CallSid === busy.sid && callback.params.CallStatus === 'busy'),
  );
  const busyEnd = callProgressFromStatusCallback(app.callbacks.at(-1)!.params);
  assert.ok(busyEnd.phase === 'ended' && busyEnd.status === 'busy' && busyEnd.sipResponseCode === 486);

  const failed = await client.createCall({
    to: '+14155550109',
    from: '+14155550199',
    twiml: hangupTwiml(),
    statusCallback: `${app.baseUrl}/status?call=failed`,
    statusCallbackEvents: ['completed'],
  });
  await app.until(() => app.callbacks.some((callback) => callback.params.CallSid === failed.sid));
  const failedCallbacks = app.callbacks.filter((callback) => callback.params.CallSid === failed.sid);
  assert.deepEqual(
    failedCallbacks.map((callback) => callback.params.CallStatus),
    ['failed'],
  );
  assert.ok(app.callbacks.every((callback) => callback.verified));
});

test('a call with a voice URL: the carrier fetches TwiML with a signed request', async (t) => {
  const fake = await carrier(t);
  const app = await startApp(t, fake.authToken);
  const client = clientFor(fake);
  const created = await client.createCall({
    to: '+14155550100',
    from: '+14155550199',
    url: `${app.baseUrl}/voice?call=c_9`,
    statusCallback: `${app.baseUrl}/status?call=c_9`,
    statusCallbackEvents: ['completed'],
  });
  await app.until(() => app.callbacks.some((callback) => callback.params.CallSid === created.sid));
  assert.equal(app.voiceFetches.length, 1);
  assert.ok(app.voiceFetches[0]!.verified);
  assert.equal(app.voiceFetches[0]!.params.CallSid, created.sid);
  assert.equal(fake.calls.get(created.sid)!.twiml, hangupTwiml());
});

test('numbers: search an area, buy one, release it; taken and unknown numbers are Twilio errors', async (t) => {
  const fake = await carrier(t);
  const client = clientFor(fake);
  const offers = await client.searchLocalNumbers('US', { areaCode: '415' });
  assert.equal(offers.length, 5);
  assert.deepEqual(offers[0], {
    phoneNumber: '+14155550100',
    isoCountry: 'US',
    locality: null,
    region: null,
    voice: true,
    sms: true,
  });

  const bought = await client.buyNumber({ phoneNumber: offers[0]!.phoneNumber, voiceUrl: 'https://parley.test/voice' });
  assert.match(bought.sid, /^PN[0-9a-f]{32}$/);
  assert.equal(bought.phoneNumber, '+14155550100');
  assert.equal(fake.numbers.get(bought.sid)?.voiceUrl, 'https://parley.test/voice');
  assert.equal((await client.searchLocalNumbers('US', { areaCode: '415' })).length, 4);

  const taken = await client
    .buyNumber({ phoneNumber: '+14155550100', voiceUrl: 'https://parley.test/voice' })
    .catch((e) => e);
  assert.ok(taken instanceof TwilioApiError);
  assert.equal(taken.status, 400);
  assert.equal(taken.twilioCode, 21422);
  assert.equal(taken.code, 'upstream_error');
  assert.equal(taken.moreInfo, 'https://www.twilio.com/docs/errors/21422');
  assert.match(
    taken.message,
    /POST http:\/\/127\.0\.0\.1:\d+\/2010-04-01\/Accounts\/AC\w+\/IncomingPhoneNumbers\.json answered 400: Twilio error 21422: PhoneNumber \+14155550100 is not available\./,
  );

  await client.releaseNumber(bought.sid);
  assert.equal(fake.numbers.size, 0);
  const gone = await client.releaseNumber(bought.sid).catch((e) => e);
  assert.ok(gone instanceof TwilioApiError && gone.status === 404 && gone.twilioCode === 20404);
});

test('errors: bad credentials, a refused number, bad input, and no server are clear provider errors', async (t) => {
  const fake = await carrier(t);
  const wrongToken = 'wrong-token-0123456789';
  const denied = await clientFor(fake, wrongToken)
    .searchLocalNumbers('US', {})
    .catch((e) => e);
  assert.ok(denied instanceof TwilioApiError);
  assert.equal(denied.status, 401);
  assert.equal(denied.twilioCode, 20003);
  assert.match(denied.message, /answered 401: Twilio error 20003: Authenticate$/);
  assert.doesNotMatch(denied.message, new RegExp(wrongToken));
  assert.deepEqual(fake.requests.at(-1), {
    method: 'GET',
    path: `/2010-04-01/Accounts/${fake.accountSid}/AvailablePhoneNumbers/US/Local.json`,
    authorized: false,
  });

  const client = clientFor(fake);
  const badTo = await client.createCall({ to: '415-555', from: '+14155550199', twiml: hangupTwiml() }).catch((e) => e);
  assert.ok(badTo instanceof TwilioApiError && badTo.twilioCode === 21211);
  assert.match(badTo.message, /Invalid 'To' Phone Number: 415-555/);

  const unknownCall = await client.hangUpCall('CA0000').catch((e) => e);
  assert.ok(unknownCall instanceof TwilioApiError && unknownCall.twilioCode === 20404);

  // Refused before anything is sent.
  const before = fake.requests.length;
  for (const attempt of [
    client.createCall({ to: '+14155550100', from: '+14155550199' }),
    client.createCall({ to: '+14155550100', from: '+14155550199', twiml: hangupTwiml(), url: 'https://x.test' }),
    client.createCall({ to: '', from: '+14155550199', twiml: hangupTwiml() }),
    client.searchLocalNumbers('usa', {}),
    client.releaseNumber(''),
  ]) {
    const error = await attempt.then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(isProviderError(error, 'invalid_request'), String(error));
  }
  assert.equal(fake.requests.length, before);

  // Nothing listening.
  const { baseUrl } = fake;
  await fake.close();
  const offline = await createTwilioRestClient({ accountSid: fake.accountSid, authToken: fake.authToken, baseUrl })
    .searchLocalNumbers('US', {})
    .catch((e) => e);
  assert.ok(isProviderError(offline, 'network'), String(offline));
  assert.doesNotMatch(offline.message, new RegExp(fake.authToken));
});

test('an aborted request is reported as aborted', async (t) => {
  const fake = await carrier(t);
  const controller = new AbortController();
  controller.abort();
  const error = await clientFor(fake)
    .searchLocalNumbers('US', {}, controller.signal)
    .catch((e) => e);
  assert.ok(isProviderError(error, 'aborted'), String(error));
});
