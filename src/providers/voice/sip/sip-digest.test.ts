import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildDigestAuthorization,
  computeDigestResponse,
  parseDigestAuthorization,
  parseDigestChallenge,
  verifyDigestAuthorization,
} from './sip-digest.js';
import { SipFormatError } from './sip-uri.js';

test('RFC 2617 3.5: the MD5 qop=auth example gives its published response', () => {
  const challenge = parseDigestChallenge(
    'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
  );
  assert.deepEqual(challenge, {
    realm: 'testrealm@host.com',
    nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
    opaque: '5ccc069c403ebaf9f0171e9517f40e41',
    algorithm: 'MD5',
    qop: ['auth', 'auth-int'],
    stale: false,
  });
  const fields = computeDigestResponse(
    challenge,
    { username: 'Mufasa', password: 'Circle Of Life' },
    { method: 'GET', uri: '/dir/index.html' },
    { nonceCount: 1, cnonce: '0a4f113b' },
  );
  assert.equal(fields.response, '6629fae49393a05397450978507c4ef1');
  assert.equal(fields.nc, '00000001');
});

test('RFC 7616 3.9.1: the SHA-256 and MD5 examples give their published responses', () => {
  const base =
    'realm="http-auth@example.org", qop="auth, auth-int", nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"';
  const credentials = { username: 'Mufasa', password: 'Circle of Life' };
  const request = { method: 'GET', uri: '/dir/index.html' };
  const options = { nonceCount: 1, cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ' };
  const sha = computeDigestResponse(
    parseDigestChallenge(`Digest ${base}, algorithm=SHA-256`),
    credentials,
    request,
    options,
  );
  assert.equal(sha.response, '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
  const md5 = computeDigestResponse(
    parseDigestChallenge(`Digest ${base}, algorithm=MD5`),
    credentials,
    request,
    options,
  );
  assert.equal(md5.response, '8ca523f5e9506fed4657c9700eebdbec');
});

// Expected values computed with md5sum and sha256sum in a shell, from the RFC formulas.
test('an Asterisk-style MD5 challenge without qop, and a SHA-256 one with qop, for an INVITE', () => {
  const noQop = buildDigestAuthorization(
    'Digest algorithm=MD5, realm="asterisk", nonce="1b2c3d4e"',
    { username: '1001', password: 's3cret' },
    { method: 'INVITE', uri: 'sip:15550100@pbx.example.com' },
  );
  assert.equal(
    noQop,
    'Digest username="1001", realm="asterisk", nonce="1b2c3d4e", uri="sip:15550100@pbx.example.com", response="7d2e2ad061fcb374610419bbaaf62c23", algorithm=MD5',
  );
  const sha = buildDigestAuthorization(
    'Digest realm="sip.example.net", nonce="5f0b2e1a", algorithm=SHA-256, qop="auth"',
    { username: '1001', password: 's3cret' },
    { method: 'INVITE', uri: 'sip:+15550100@sip.example.net;transport=udp' },
    { nonceCount: 1, cnonce: '0a4f113b' },
  );
  assert.equal(
    parseDigestAuthorization(sha).response,
    'e5ae739dd0dbd205bbe4044e686067d66dbe76d1a37c719023a133c6585cd721',
  );
  assert.match(sha, /, qop=auth, nc=00000001$/);
});

test('the far end verifies what the caller computed, and refuses a wrong password, nonce or method', () => {
  for (const challengeHeader of [
    'Digest realm="asterisk", nonce="abc123", algorithm=MD5',
    'Digest realm="asterisk", nonce="abc123", qop="auth", opaque="xyz"',
    'Digest realm="asterisk", nonce="abc123", algorithm=SHA-256, qop="auth"',
    'Digest realm="asterisk", nonce="abc123", algorithm=MD5-sess, qop="auth"',
  ]) {
    const authorization = buildDigestAuthorization(
      challengeHeader,
      { username: '1001', password: 's3cret' },
      { method: 'INVITE', uri: 'sip:15550100@pbx.example.com' },
    );
    const expected = { method: 'INVITE', realm: 'asterisk', nonce: 'abc123', password: 's3cret', username: '1001' };
    assert.equal(verifyDigestAuthorization(authorization, expected), true, challengeHeader);
    assert.equal(verifyDigestAuthorization(authorization, { ...expected, password: 'wrong' }), false);
    assert.equal(verifyDigestAuthorization(authorization, { ...expected, nonce: 'other' }), false);
    assert.equal(verifyDigestAuthorization(authorization, { ...expected, method: 'BYE' }), false);
    assert.equal(verifyDigestAuthorization(authorization, { ...expected, username: '1002' }), false);
  }
  assert.equal(
    verifyDigestAuthorization('Basic Zm9vOmJhcg==', { method: 'INVITE', realm: 'r', nonce: 'n', password: 'p' }),
    false,
  );
});

test('stale challenges are recognised; odd or unsupported challenges are clear errors', () => {
  assert.equal(parseDigestChallenge('Digest realm="r", nonce="n", stale=TRUE').stale, true);
  assert.equal(parseDigestChallenge('digest   realm="a, b",nonce="n"').realm, 'a, b');
  assert.throws(() => parseDigestChallenge('Basic realm="r"'), /not a Digest header/);
  assert.throws(() => parseDigestChallenge('Digest realm="r"'), /realm and a nonce/);
  assert.throws(
    () => parseDigestChallenge('Digest realm="r", nonce="n", algorithm=SHA-512-256'),
    /unsupported digest algorithm/,
  );
  assert.throws(() => parseDigestChallenge('Digest realm="r, nonce="n"'), SipFormatError);
  const authIntOnly = parseDigestChallenge('Digest realm="r", nonce="n", qop="auth-int"');
  assert.throws(
    () => computeDigestResponse(authIntOnly, { username: 'u', password: 'p' }, { method: 'INVITE', uri: 'sip:x@y' }),
    /unsupported qop: auth-int/,
  );
});
