import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatNameAddr, formatSipUri, parseNameAddr, parseSipUri, SipFormatError } from './sip-uri.js';

test('a full SIP URI: user, password, host, port, parameters and headers, and back', () => {
  const uri = parseSipUri('sip:alice:secretword@atlanta.com:5070;transport=tcp;lr?subject=project%20x&priority=urgent');
  assert.deepEqual(uri, {
    scheme: 'sip',
    user: 'alice',
    password: 'secretword',
    host: 'atlanta.com',
    port: 5070,
    params: { transport: 'tcp', lr: null },
    headers: { subject: 'project%20x', priority: 'urgent' },
  });
  assert.equal(
    formatSipUri(uri),
    'sip:alice:secretword@atlanta.com:5070;transport=tcp;lr?subject=project%20x&priority=urgent',
  );
});

test('phone numbers, IPv6 hosts, sips and a host without a user', () => {
  assert.deepEqual(parseSipUri('sip:+15550100@203.0.113.10;user=phone'), {
    scheme: 'sip',
    user: '+15550100',
    host: '203.0.113.10',
    params: { user: 'phone' },
    headers: {},
  });
  const v6 = parseSipUri('SIPS:[2001:db8::10]:5061');
  assert.equal(v6.scheme, 'sips');
  assert.equal(v6.host, '[2001:db8::10]');
  assert.equal(v6.port, 5061);
  assert.equal(formatSipUri(v6), 'sips:[2001:db8::10]:5061');
  assert.equal(parseSipUri('sip:pbx.example.com').user, undefined);
});

test('name-addr with a quoted display name, bare name, and the addr-spec form whose ; starts header params', () => {
  const quoted = parseNameAddr(String.raw`"Ada \"the\" Lovelace" <sip:ada@example.com;transport=udp>;tag=9fxced76sl`);
  assert.equal(quoted.displayName, 'Ada "the" Lovelace');
  assert.deepEqual(quoted.uri.params, { transport: 'udp' });
  assert.deepEqual(quoted.params, { tag: '9fxced76sl' });
  assert.equal(
    formatNameAddr(quoted),
    String.raw`"Ada \"the\" Lovelace" <sip:ada@example.com;transport=udp>;tag=9fxced76sl`,
  );

  assert.equal(parseNameAddr('Bob <sip:bob@biloxi.com>').displayName, 'Bob');
  const spec = parseNameAddr('sip:bob@biloxi.com;tag=a6c85cf');
  assert.deepEqual(spec.uri.params, {});
  assert.deepEqual(spec.params, { tag: 'a6c85cf' });
});

test('malformed URIs and addresses are clear errors', () => {
  for (const bad of [
    'tel:+15550100',
    'sip:',
    'sip:bob@',
    'sip:bob@host:99999',
    'sip:bob@host:0',
    'sip:bob@ho st',
    'sip:b<o>b@host',
    'http://x',
  ]) {
    assert.throws(() => parseSipUri(bad), SipFormatError, bad);
  }
  assert.throws(() => parseNameAddr('"Bob <sip:bob@biloxi.com>'), SipFormatError);
  assert.throws(() => parseNameAddr('Bob <sip:bob@biloxi.com'), SipFormatError);
});
