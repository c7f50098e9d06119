import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import {
  bodySha256,
  computeSignature,
  signaturePayload,
  urlWithBodySha256,
  verifyFormSignature,
  verifyJsonBodySignature,
} from './request-signature.js';

// The vector Twilio's own helper library tests its validator with.
const TOKEN = '12345';
const URL_WITH_QUERY = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const PARAMS = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+14158675309',
  Digits: '1234',
  From: '+14158675309',
  To: '+18005551212',
};
const JSON_BODY = '{"property": "value", "boolean": true}';

/** The documented algorithm, written out independently of the code under test. */
const expected = (token: string, text: string) => createHmac('sha1', token).update(text).digest('base64');

test("the signature is HMAC-SHA1 over the URL and the sorted name+value pairs (Twilio's library vector)", () => {
  const text = `${URL_WITH_QUERY}CallSidCA1234567890ABCDECaller+14158675309Digits1234From+14158675309To+18005551212`;
  assert.equal(signaturePayload(URL_WITH_QUERY, PARAMS), text);
  assert.equal(computeSignature(TOKEN, URL_WITH_QUERY, PARAMS), expected(TOKEN, text));
  assert.equal(computeSignature(TOKEN, URL_WITH_QUERY, PARAMS), 'RSOYDt4T1cUTdK1PDd93/VVr8B8=');
  assert.ok(verifyFormSignature(TOKEN, URL_WITH_QUERY, PARAMS, 'RSOYDt4T1cUTdK1PDd93/VVr8B8='));
});

test('names sort by code unit (uppercase first) and a repeated name adds each value, sorted', () => {
  const params = { b: '2', B: '1', a: ['z', 'y'] };
  assert.equal(signaturePayload('https://x.test/cb', params), 'https://x.test/cbB1ayazb2');
  assert.equal(computeSignature('tok', 'https://x.test/cb', params), expected('tok', 'https://x.test/cbB1ayazb2'));
});

test('a changed parameter, URL, token or signature fails verification', () => {
  const signature = computeSignature(TOKEN, URL_WITH_QUERY, PARAMS);
  assert.ok(verifyFormSignature(TOKEN, URL_WITH_QUERY, PARAMS, signature));
  assert.equal(verifyFormSignature(TOKEN, URL_WITH_QUERY, { ...PARAMS, Digits: '1235' }, signature), false);
  assert.equal(verifyFormSignature(TOKEN, URL_WITH_QUERY, { ...PARAMS, Extra: '' }, signature), false);
  assert.equal(verifyFormSignature(TOKEN, `${URL_WITH_QUERY}&baz=3`, PARAMS, signature), false);
  assert.equal(verifyFormSignature('54321', URL_WITH_QUERY, PARAMS, signature), false);
  assert.equal(verifyFormSignature(TOKEN, URL_WITH_QUERY, PARAMS, `${signature.slice(0, -2)}A=`), false);
  assert.equal(verifyFormSignature(TOKEN, URL_WITH_QUERY, PARAMS, ''), false);
  assert.equal(verifyFormSignature(TOKEN, URL_WITH_QUERY, PARAMS, undefined), false);
  assert.equal(
    verifyFormSignature('', URL_WITH_QUERY, PARAMS, expected('', signaturePayload(URL_WITH_QUERY, PARAMS))),
    false,
  );
});

test("a URL signed with the scheme's default port verifies without it, and the other way round", () => {
  const withPort = 'https://mycompany.com:443/myapp.php?foo=1&bar=2';
  const signedWithPort = expected(TOKEN, signaturePayload(withPort, PARAMS));
  assert.ok(verifyFormSignature(TOKEN, URL_WITH_QUERY, PARAMS, signedWithPort));
  const signedWithout = computeSignature(TOKEN, URL_WITH_QUERY, PARAMS);
  assert.ok(verifyFormSignature(TOKEN, withPort, PARAMS, signedWithout));
  // Another port is another URL.
  assert.equal(
    verifyFormSignature(TOKEN, 'https://mycompany.com:8443/myapp.php?foo=1&bar=2', PARAMS, signedWithout),
    false,
  );
});

test('a JSON body is covered by the bodySHA256 query parameter, which the signature covers', () => {
  const hash = createHash('sha256').update(JSON_BODY).digest('hex');
  assert.equal(bodySha256(JSON_BODY), hash);
  // Twilio's library vector for this body.
  assert.equal(hash, '0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620');

  const url = `${URL_WITH_QUERY}&bodySHA256=${hash}`;
  assert.equal(urlWithBodySha256(URL_WITH_QUERY, JSON_BODY), url);
  const signature = expected(TOKEN, url);
  assert.ok(verifyJsonBodySignature(TOKEN, url, JSON_BODY, signature));
  assert.ok(verifyJsonBodySignature(TOKEN, url, Buffer.from(JSON_BODY), signature));

  assert.equal(verifyJsonBodySignature(TOKEN, url, JSON_BODY.replace('true', 'false'), signature), false);
  assert.equal(verifyJsonBodySignature(TOKEN, URL_WITH_QUERY, JSON_BODY, expected(TOKEN, URL_WITH_QUERY)), false);
  const otherHash = bodySha256('{}');
  const signedOther = `${URL_WITH_QUERY}&bodySHA256=${otherHash}`;
  assert.equal(verifyJsonBodySignature(TOKEN, signedOther, JSON_BODY, expected(TOKEN, signedOther)), false);
  assert.equal(verifyJsonBodySignature(TOKEN, 'not a url', JSON_BODY, signature), false);
});
