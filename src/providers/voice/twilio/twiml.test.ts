import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectStreamTwiml, escapeXml, hangupTwiml, rejectTwiml, TwimlError } from './twiml.js';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

test('Connect/Stream carries the URL and the parameters, in order', () => {
  assert.equal(
    connectStreamTwiml({
      url: 'wss://voice.example.com/v1/stream?call=c_1',
      parameters: { callId: 'c_1', direction: 'outbound' },
    }),
    `${DECLARATION}<Response><Connect><Stream url="wss://voice.example.com/v1/stream?call=c_1">` +
      '<Parameter name="callId" value="c_1"/><Parameter name="direction" value="outbound"/>' +
      '</Stream></Connect></Response>',
  );
});

test('a stream without parameters is an empty element; name and statusCallback are attributes', () => {
  assert.equal(
    connectStreamTwiml({ url: 'wss://v.test/s', name: 'agent', statusCallback: 'https://v.test/cb' }),
    `${DECLARATION}<Response><Connect><Stream url="wss://v.test/s" name="agent" statusCallback="https://v.test/cb"/></Connect></Response>`,
  );
});

test('attribute values are XML-escaped', () => {
  assert.equal(escapeXml(`a&b<c>"d"'e'`), 'a&amp;b&lt;c&gt;&quot;d&quot;&apos;e&apos;');
  const twiml = connectStreamTwiml({
    url: 'wss://v.test/s?a=1&b=2',
    parameters: { 'na"me': `O'Brien & <Sons>` },
  });
  assert.match(twiml, /url="wss:\/\/v\.test\/s\?a=1&amp;b=2"/);
  assert.match(twiml, /<Parameter name="na&quot;me" value="O&apos;Brien &amp; &lt;Sons&gt;"\/>/);
  assert.doesNotMatch(twiml.slice(DECLARATION.length), /&(?!amp;|lt;|gt;|quot;|apos;)/);
});

test('a stream URL that is not ws(s) or not a URL, and control characters, are refused', () => {
  assert.throws(() => connectStreamTwiml({ url: 'https://v.test/s' }), TwimlError);
  assert.throws(() => connectStreamTwiml({ url: 'not a url' }), /not a URL/);
  assert.throws(() => connectStreamTwiml({ url: 'wss://v.test/s', parameters: { a: 'x\u0001y' } }), TwimlError);
  // Tabs and newlines are legal XML.
  assert.equal(escapeXml('a\tb\nc'), 'a\tb\nc');
});

test('Reject and Hangup', () => {
  assert.equal(rejectTwiml('busy'), `${DECLARATION}<Response><Reject reason="busy"/></Response>`);
  assert.equal(rejectTwiml(), `${DECLARATION}<Response><Reject reason="rejected"/></Response>`);
  assert.equal(hangupTwiml(), `${DECLARATION}<Response><Hangup/></Response>`);
});
