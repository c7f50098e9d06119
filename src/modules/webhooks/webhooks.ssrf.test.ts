/**
 * Targets a webhook may not reach: with the default configuration every non-public address class is refused when an
 * endpoint is saved, a name that resolves to loopback too, and on delivery the address actually connected to is
 * checked again (a name that resolved to a public address when saved and to loopback later, DNS rebinding, is refused).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../config.js';
import { buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { createWebhookSender, isPublicAddress, refusalOf, type Lookup } from './webhooks.http.js';

let t: TestApp;
let user: SignedUp;

before(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_HTTP: 'true' } });
  user = await signUp(t.app);
});
after(() => t.close());

const REFUSED = {
  loopback: 'http://127.0.0.1/hook',
  'loopback elsewhere in 127/8': 'http://127.3.2.1:8080/hook',
  'RFC 1918 10/8': 'https://10.1.2.3/hook',
  'RFC 1918 172.16/12': 'https://172.20.0.5/hook',
  'RFC 1918 192.168/16': 'https://192.168.1.10/hook',
  'CGNAT 100.64/10': 'https://100.64.0.1/hook',
  'link-local': 'https://169.254.10.10/hook',
  'cloud metadata': 'http://169.254.169.254/latest/meta-data',
  'unspecified 0.0.0.0': 'http://0.0.0.0/hook',
  'IPv6 loopback': 'http://[::1]/hook',
  'IPv6 cloud metadata': 'http://[fd00:ec2::254]/hook',
  'IPv6 unique local': 'https://[fc00::1]/hook',
  'IPv6 link-local': 'https://[fe80::1]/hook',
  'IPv4-mapped IPv6 loopback': 'http://[::ffff:127.0.0.1]/hook',
  'IPv4-mapped IPv6 in hex': 'http://[::ffff:7f00:1]/hook',
  'IPv4-mapped public address': 'http://[::ffff:8.8.8.8]/hook',
  'IPv4-compatible IPv6 loopback': 'http://[::127.0.0.1]/hook',
  'IPv6 outside global unicast (200::/7)': 'http://[200::1]/hook',
  'IPv6 outside global unicast (2::1)': 'http://[2::1]/hook',
  'IPv6 outside global unicast (20::1)': 'http://[20::1]/hook',
  'IPv6 reserved (3ff::1)': 'http://[3ff::1]/hook',
  'IPv6 outside global unicast (4000::/2)': 'http://[4000::1]/hook',
  'IPv6 documentation (3fff::/20)': 'http://[3fff::1]/hook',
  'a name that resolves to loopback': 'http://localhost:9/hook',
  'decimal spelling of loopback': 'http://2130706433/hook',
  multicast: 'https://224.0.0.1/hook',
};

test('every non-public address class is refused when an endpoint is saved, and nothing is written', async () => {
  for (const [kind, url] of Object.entries(REFUSED)) {
    const response = await call(user, 'POST', '/webhooks', { url });
    assert.equal(response.statusCode, 400, `${kind}: ${response.body}`);
    const body = errorBody(response);
    assert.equal(body.error, 'validation_failed');
    assert.match(body.message, /private or reserved/, kind);
  }
  const list = await call(user, 'GET', '/webhooks');
  assert.equal(list.json().total, 0);
  // A change of URL is checked the same way.
  const created = await call(user, 'POST', '/webhooks', { url: 'https://93.184.215.14/hook' });
  assert.equal(created.statusCode, 200, created.body);
  const patched = await call(user, 'PATCH', `/webhooks/${created.json().id}`, { url: 'http://[::1]:3000/' });
  assert.equal(patched.statusCode, 400);
  assert.equal((await call(user, 'GET', `/webhooks/${created.json().id}`)).json().url, 'https://93.184.215.14/hook');
});

test('a URL is stored in its normalized form, on creation and on change', async () => {
  const created = await call(user, 'POST', '/webhooks', { url: 'HTTPS://93.184.215.14:443/Hooks/../in box?a=1#top' });
  assert.equal(created.statusCode, 200, created.body);
  assert.equal(created.json().url, 'https://93.184.215.14/in%20box?a=1#top');
  const id = created.json().id;
  assert.equal((await call(user, 'GET', `/webhooks/${id}`)).json().url, 'https://93.184.215.14/in%20box?a=1#top');
  const changed = await call(user, 'PATCH', `/webhooks/${id}`, { url: 'http://[2606:4700:4700:0:0:0:0:1111]:80/A' });
  assert.equal(changed.statusCode, 200, changed.body);
  assert.equal(changed.json().url, 'http://[2606:4700:4700::1111]/A');
  // The same URL written another way is no change.
  const same = await call(user, 'PATCH', `/webhooks/${id}`, { url: 'HTTP://[2606:4700:4700::1111]/A' });
  assert.equal(same.json().url, 'http://[2606:4700:4700::1111]/A');
  // One that does not parse is refused, not stored.
  const bad = await call(user, 'PATCH', `/webhooks/${id}`, { url: 'http://[::1' });
  assert.equal(bad.statusCode, 400);
  assert.equal(errorBody(bad).error, 'validation_failed');
  assert.equal((await call(user, 'DELETE', `/webhooks/${id}`)).statusCode, 200);
});

test('address classes: public addresses pass, the rest do not', () => {
  for (const address of ['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:81b::200e'])
    assert.ok(isPublicAddress(address), address);
  for (const address of [
    '127.0.0.1',
    '10.0.0.1',
    '100.127.255.254',
    '169.254.169.254',
    '172.31.255.255',
    '192.168.0.1',
    '198.18.0.1',
    '::1',
    '::',
    'fd00:ec2::254',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2001:db8::1',
    'fe80::1',
    // Not global unicast, though their text starts like it once leading zeros are dropped.
    '200::1',
    '2::1',
    '20::1',
    '3ff::1',
    '0200::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::127.0.0.1',
    '2002:7f00:1::1',
    '2001::1',
    '3fff::1',
    'ff02::1',
    '255.255.255.255',
    '240.0.0.1',
    'not an address',
  ]) {
    assert.ok(!isPublicAddress(address), address);
  }
});

test('https only unless the operator allows http; by default http is allowed except in production', async () => {
  assert.equal(loadConfig({ NODE_ENV: 'production' }).webhooks.allowHttp, false);
  assert.equal(loadConfig({}).webhooks.allowHttp, true);
  assert.equal(loadConfig({}).webhooks.allowPrivate, false);
  assert.match(
    String(await refusalOf('http://93.184.215.14/hook', { allowHttp: false, allowPrivate: false })),
    /must be an https URL/,
  );
  assert.equal(await refusalOf('https://93.184.215.14/hook', { allowHttp: false, allowPrivate: false }), null);
});

test('on delivery the address connected to is checked: a name rebound to loopback is refused, and nothing reaches it', async () => {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // Public when the endpoint is saved, loopback from then on.
  let answers = 0;
  const rebinding: Lookup = (_host, options, callback) => {
    const address = answers++ === 0 ? '93.184.215.14' : '127.0.0.1';
    if (options.all) callback(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  };
  const url = `http://rebind.example:${port}/hook`;
  assert.equal(
    await refusalOf(url, { allowHttp: true, allowPrivate: false, lookup: rebinding }),
    null,
    'accepted when saved',
  );
  const sender = createWebhookSender({ allowHttp: true, allowPrivate: false, lookup: rebinding });
  try {
    const result = await sender.post(url, { 'content-type': 'application/json' }, '{}');
    assert.equal(result.ok, false);
    assert.equal(result.statusCode, null);
    assert.match(String(result.error), /target refused: rebind\.example resolves to a private or reserved address/);
    // A literal private address stored before the rules changed is refused without connecting.
    const literal = await sender.post(`http://127.0.0.1:${port}/hook`, {}, '{}');
    assert.match(String(literal.error), /target refused/);
    assert.equal(hits, 0);
  } finally {
    await sender.close();
    server.close();
  }
  // With private targets allowed (a private network, tests) the same receiver is reached.
  const open = createWebhookSender({ allowHttp: true, allowPrivate: true });
  try {
    assert.equal((await open.post(`http://127.0.0.1:${port}/hook`, {}, '{}')).error, 'connection refused');
  } finally {
    await open.close();
  }
});
