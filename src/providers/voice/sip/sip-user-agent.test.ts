/**
 * The user agent against sipp (its built-in UAS and UAC, and the scenarios in test/fixtures/sipp/) and against
 * itself over loopback. sipp runs one call (-m 1) and its exit code says whether the call went as its scenario
 * expects. sipp comes from Debian's sip-tester package (`.ci/run` installs it); without it those tests skip.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { getHeaders } from './sip-message.js';
import { buildSdpOffer } from './sip-sdp.js';
import { ringTimeoutOutcome } from './sip-transaction.js';
import { SipUserAgent, type SipUserAgentOptions } from './sip-user-agent.js';
import type { IncomingInvite, InviteHandler } from './sip-user-agent-server.js';

const SIPP_MISSING = spawnSync('sipp', ['-v']).error
  ? 'sipp is not installed (DEBIAN_FRONTEND=noninteractive apt-get install -y sip-tester)'
  : false;
const SCENARIOS = fileURLToPath(new URL('../../../../test/fixtures/sipp/', import.meta.url));
const GUARD_MS = 60_000;

/** Distinct free ports: the probes stay bound until all are chosen. */
async function freeUdpPorts(count: number): Promise<number[]> {
  const probes = Array.from({ length: count }, () => createSocket('udp4'));
  await Promise.all(
    probes.map((probe) => {
      probe.bind(0, '127.0.0.1');
      return once(probe, 'listening');
    }),
  );
  const ports = probes.map((probe) => probe.address().port);
  await Promise.all(probes.map((probe) => new Promise<void>((resolve) => probe.close(() => resolve()))));
  return ports;
}

const agents: SipUserAgent[] = [];
const sipps: ReturnType<typeof spawn>[] = [];
after(async () => {
  for (const sipp of sipps) if (sipp.exitCode === null && sipp.signalCode === null) sipp.kill();
  await Promise.all(agents.map((agent) => agent.close()));
});

async function startAgent(options: SipUserAgentOptions = {}): Promise<SipUserAgent> {
  const agent = await SipUserAgent.start(options);
  agents.push(agent);
  return agent;
}

/** sipp for one call; `exit` resolves with its exit code and what it printed on stderr. */
async function runSipp(scenario: string[], extra: string[] = []) {
  const [sipPort, mediaPort] = (await freeUdpPorts(2)) as [number, number];
  const sipp = spawn(
    'sipp',
    [
      ...scenario,
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
      String(GUARD_MS / 1000),
      ...extra,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  sipps.push(sipp);
  let stderr = '';
  sipp.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = once(sipp, 'exit').then(([code]) => ({ code: code as number | null, stderr }));
  return { sipPort, mediaPort, exit, stderr: () => stderr };
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

const offer = buildSdpOffer({ address: '127.0.0.1', port: 40000 });

test('calls sipp built-in UAS: 180, 200 with its SDP answer, ACK, then our BYE', { skip: SIPP_MISSING }, async () => {
  const agent = await startAgent();
  const sipp = await runSipp(['-sn', 'uas']);
  const result = await agent.invite({
    to: `sip:service@127.0.0.1:${sipp.sipPort}`,
    from: 'sip:parley@127.0.0.1',
    sdpOffer: offer,
    ringTimeoutMs: GUARD_MS,
  });
  assert.deepEqual(result.outcome, { outcome: 'answered' });
  assert.deepEqual(result.provisional, [180]);
  assert.equal(result.dialog?.remoteMedia.port, sipp.mediaPort);
  assert.equal((await result.dialog!.bye()).status, 200);
  const { code, stderr } = await sipp.exit;
  assert.equal(code, 0, `sipp failed: ${stderr}`);
  assert.equal(agent.malformedCount, 0);
});

test('a 486 from the callee is busy, and its ACK reaches sipp', { skip: SIPP_MISSING }, async () => {
  const agent = await startAgent();
  const sipp = await runSipp(['-sf', `${SCENARIOS}uas-busy.xml`]);
  const result = await agent.invite({
    to: `sip:service@127.0.0.1:${sipp.sipPort}`,
    from: 'sip:parley@127.0.0.1',
    sdpOffer: offer,
    ringTimeoutMs: GUARD_MS,
  });
  assert.deepEqual(result.outcome, { outcome: 'busy', code: 486, reason: 'Busy Here' });
  assert.equal(result.dialog, undefined);
  const { code, stderr } = await sipp.exit;
  assert.equal(code, 0, `sipp failed: ${stderr}`);
});

test('ringing past the ring timeout: CANCEL, 487 ACKed, no answer', { skip: SIPP_MISSING }, async () => {
  const agent = await startAgent();
  const sipp = await runSipp(['-sf', `${SCENARIOS}uas-ring-no-answer.xml`]);
  const heard: number[] = [];
  const result = await agent.invite({
    to: `sip:service@127.0.0.1:${sipp.sipPort}`,
    from: 'sip:parley@127.0.0.1',
    sdpOffer: offer,
    ringTimeoutMs: 200,
    onProvisional: (status) => heard.push(status),
  });
  assert.deepEqual(result.outcome, ringTimeoutOutcome(), sipp.stderr());
  assert.deepEqual(result.provisional, [180]);
  assert.deepEqual(heard, [180]);
  const { code, stderr } = await sipp.exit;
  assert.equal(code, 0, `sipp failed (it expects CANCEL, then the ACK of its 487): ${stderr}`);
});

test('a 401 challenge is answered once with digest credentials, then the call is answered', {
  skip: SIPP_MISSING,
}, async () => {
  const agent = await startAgent();
  const sipp = await runSipp(['-sf', `${SCENARIOS}uas-digest-challenge.xml`]);
  const result = await agent.invite({
    to: `sip:service@127.0.0.1:${sipp.sipPort}`,
    from: 'sip:alice@127.0.0.1',
    sdpOffer: offer,
    credentials: { username: 'alice', password: 'secret' },
    ringTimeoutMs: GUARD_MS,
  });
  assert.deepEqual(result.outcome, { outcome: 'answered' }, `sipp verified the Authorization header? ${sipp.stderr()}`);
  assert.equal((await result.dialog!.bye()).status, 200);
  const { code, stderr } = await sipp.exit;
  assert.equal(code, 0, `sipp failed: ${stderr}`);
});

test('sipp built-in UAC calls us: the handler answers, sipp hangs up', { skip: SIPP_MISSING }, async () => {
  const offers: IncomingInvite[] = [];
  const agent = await startAgent({
    onInvite: (call) => {
      offers.push(call);
      return { answer: { address: '127.0.0.1', port: 40010 } };
    },
  });
  const established = once(agent, 'call');
  const sipp = await runSipp(['-sn', 'uac', `127.0.0.1:${agent.address.port}`]);
  const [dialog] = await established;
  assert.equal(dialog.state.direction, 'inbound');
  assert.equal(dialog.remoteMedia.codec, 'PCMU');
  assert.equal(offers.length, 1);
  if (!dialog.ended) await once(dialog, 'bye');
  assert.equal(dialog.ended, true);
  const { code, stderr } = await sipp.exit;
  assert.equal(code, 0, `sipp failed: ${stderr}`);
});

test('two of our agents over loopback: answer, BYE both ways, reject, CANCEL, OPTIONS', async () => {
  let decide: InviteHandler = () => ({
    answer: { address: '127.0.0.1', port: 40020 },
  });
  const callee = await startAgent({ user: 'callee', onInvite: (call) => decide(call) });
  const caller = await startAgent({ user: 'caller' });
  const to = `sip:callee@127.0.0.1:${callee.address.port}`;
  const from = 'sip:caller@127.0.0.1';

  // Answered; the caller hangs up.
  let established = once(callee, 'call');
  const answered = await caller.invite({ to, from, sdpOffer: offer, ringTimeoutMs: GUARD_MS });
  assert.deepEqual(answered.outcome, { outcome: 'answered' });
  assert.equal(answered.dialog?.remoteMedia.port, 40020);
  const [inbound] = await established;
  assert.equal(inbound.remoteMedia.port, 40000);
  const calleeHeard = once(inbound, 'bye');
  assert.equal((await answered.dialog!.bye()).status, 200);
  await calleeHeard;

  // Answered; the callee hangs up.
  established = once(callee, 'call');
  const second = await caller.invite({ to, from, sdpOffer: offer, ringTimeoutMs: GUARD_MS });
  const [inbound2] = await established;
  const callerHeard = once(second.dialog!, 'bye');
  assert.equal((await inbound2.bye()).status, 200);
  await callerHeard;

  // Rejected.
  decide = () => ({ reject: 486, reason: 'Busy Here' });
  const busy = await caller.invite({ to, from, sdpOffer: offer, ringTimeoutMs: GUARD_MS });
  assert.deepEqual(busy.outcome, { outcome: 'busy', code: 486, reason: 'Busy Here' });

  // Ringing, never decided: the caller's ring timeout cancels it.
  decide = (call) => {
    call.ring();
    return new Promise(() => {});
  };
  const unanswered = await caller.invite({ to, from, sdpOffer: offer, ringTimeoutMs: 200 });
  assert.deepEqual(unanswered.outcome, ringTimeoutOutcome());
  assert.deepEqual(unanswered.provisional, [100, 180]);

  // OPTIONS both ways, and a datagram that is not SIP is counted, not fatal.
  const pong = await caller.ping(callee.address);
  assert.equal(pong.status, 200);
  assert.deepEqual(getHeaders(pong, 'Allow'), ['INVITE', 'ACK', 'CANCEL', 'BYE', 'OPTIONS']);
  const junk = createSocket('udp4');
  junk.send(Buffer.from('not a SIP message\r\n\r\n'), callee.address.port, '127.0.0.1');
  await waitFor(() => callee.malformedCount === 1);
  junk.close();
  assert.equal((await callee.ping(`sip:caller@127.0.0.1:${caller.address.port}`)).status, 200);
});
