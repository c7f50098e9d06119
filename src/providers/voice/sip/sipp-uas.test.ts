/**
 * The SIP blocks against a real far end: sipp's built-in UAS scenario answers a call from a minimal UDP client
 * made of the blocks (INVITE with our SDP offer, 180, 200 with an SDP answer, ACK, BYE, 200). sipp comes from
 * Debian's sip-tester package (`.ci/run` installs it); without it the test says so and skips.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { buildAckFor2xx, buildRequest, type RequestFields } from './sip-builders.js';
import {
  getHeader,
  parseSipMessage,
  serializeSipMessage,
  tagOf,
  type SipRequest,
  type SipResponse,
} from './sip-message.js';
import { buildSdpOffer, parseSdpAnswer } from './sip-sdp.js';
import { inviteOutcome, newBranch, newTag, responseMatchesTransaction, retransmitSchedule } from './sip-transaction.js';
import { parseNameAddr, parseSipUri } from './sip-uri.js';

const SIPP_MISSING = spawnSync('sipp', ['-v']).error
  ? 'sipp is not installed (DEBIAN_FRONTEND=noninteractive apt-get install -y sip-tester)'
  : false;

async function freeUdpPort(): Promise<number> {
  const probe = createSocket('udp4');
  probe.bind(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  return port;
}

/** A client transaction over UDP: sends, retransmits on the RFC 3261 schedule, resolves with the final response. */
function createUdpClient(socket: Socket, far: { host: string; port: number }) {
  const received: SipResponse[] = [];
  const waiters = new Set<() => void>();
  const unreadable: string[] = [];
  socket.on('message', (bytes) => {
    try {
      const message = parseSipMessage(bytes);
      if (message.kind === 'response') received.push(message);
    } catch (error) {
      unreadable.push((error as Error).message); // asserted empty at the end, not thrown inside the socket
    }
    for (const wake of waiters) wake();
  });
  const send = (message: SipRequest) => socket.send(serializeSipMessage(message), far.port, far.host);

  return {
    send,
    received,
    unreadable,
    async transaction(request: SipRequest): Promise<{ final: SipResponse; provisional: SipResponse[] }> {
      const via = parseSipMessage(serializeSipMessage(request)).headers.find((header) => header.name === 'Via')!;
      const branch = /branch=([^;]+)/.exec(via.value)![1]!;
      const mine = () =>
        received.filter((response) => responseMatchesTransaction(response, { branch, method: request.method }));
      const timers = retransmitSchedule(request.method, 'UDP').map((at) => setTimeout(() => send(request), at));
      send(request);
      try {
        for (;;) {
          const final = mine().find((response) => response.status >= 200);
          if (final) return { final, provisional: mine().filter((response) => response.status < 200) };
          await new Promise<void>((resolve) => {
            const wake = () => {
              waiters.delete(wake);
              resolve();
            };
            waiters.add(wake);
          });
        }
      } finally {
        for (const timer of timers) clearTimeout(timer);
      }
    },
  };
}

test('a call to sipp built-in UAS: INVITE with our offer, 200 with its answer, ACK, BYE and its 200', {
  skip: SIPP_MISSING,
}, async (t) => {
  const [sipPort, mediaPort] = [await freeUdpPort(), await freeUdpPort()];
  const sipp = spawn(
    'sipp',
    [
      '-sn',
      'uas',
      '-i',
      '127.0.0.1',
      '-p',
      String(sipPort),
      '-mi',
      '127.0.0.1',
      '-mp',
      String(mediaPort),
      '-m',
      '1',
      '-nostdin',
      '-timeout',
      '60',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let sippErrors = '';
  sipp.stderr.on('data', (chunk: Buffer) => {
    sippErrors += chunk.toString();
  });
  const sippExit = once(sipp, 'exit');
  t.after(() => {
    if (sipp.exitCode === null) sipp.kill();
  });

  const socket = createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  t.after(() => socket.close());
  const local = { host: '127.0.0.1', port: socket.address().port };
  const client = createUdpClient(socket, { host: '127.0.0.1', port: sipPort });

  const via = (): RequestFields['via'] => ({ transport: 'UDP', ...local, branch: newBranch() });
  const from = { uri: parseSipUri(`sip:parley@127.0.0.1:${local.port}`), tag: newTag() };
  const callId = `${newTag()}@127.0.0.1`;
  const ourRtpPort = 40000;
  const invite = buildRequest({
    method: 'INVITE',
    uri: parseSipUri(`sip:service@127.0.0.1:${sipPort}`),
    from,
    to: { uri: parseSipUri(`sip:service@127.0.0.1:${sipPort}`) },
    callId,
    cseq: 1,
    via: via(),
    contact: parseSipUri(`sip:parley@127.0.0.1:${local.port}`),
    body: { contentType: 'application/sdp', content: buildSdpOffer({ address: '127.0.0.1', port: ourRtpPort }) },
  });

  const answered = await client.transaction(invite);
  assert.deepEqual(
    answered.provisional.map((response) => response.status),
    [180],
  );
  assert.equal(answered.final.status, 200);
  assert.deepEqual(inviteOutcome(answered.final.status, answered.final.reason), { outcome: 'answered' });
  assert.equal(getHeader(answered.final, 'Content-Type'), 'application/sdp');
  assert.deepEqual(parseSdpAnswer(answered.final.body.toString()), {
    address: '127.0.0.1',
    port: mediaPort,
    payloadType: 0,
    codec: 'PCMU',
    dtmfPayloadType: null,
  });
  const toTag = tagOf(getHeader(answered.final, 'To')!);
  assert.ok(toTag, 'the 200 OK carries the far end tag');

  client.send(buildAckFor2xx(invite, answered.final, via()));

  const remoteTarget = parseNameAddr(getHeader(answered.final, 'Contact')!).uri;
  const bye = buildRequest({
    method: 'BYE',
    uri: remoteTarget,
    from,
    to: { uri: parseSipUri(`sip:service@127.0.0.1:${sipPort}`), tag: toTag },
    callId,
    cseq: 2,
    via: via(),
  });
  const hungUp = await client.transaction(bye);
  assert.equal(hungUp.final.status, 200);
  assert.equal(getHeader(hungUp.final, 'CSeq'), '2 BYE');
  assert.deepEqual(client.unreadable, [], 'every datagram sipp sent parsed');

  // sipp ends after its call (it waits 4 s for a repeated BYE first) and counts it successful: exit code 0.
  const [code] = await sippExit;
  assert.equal(code, 0, `sipp failed: ${sippErrors}`);
});
