import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatagramError, internetChecksum, ipv4UdpDatagram, MAX_UDP_PAYLOAD_BYTES } from './ipv4-udp.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

test('the IPv4 header matches a known header byte for byte, checksum b861 included', () => {
  // 192.168.0.1 -> 192.168.0.199, total length 115, DF, TTL 64, UDP: the textbook example of the checksum.
  const packet = ipv4UdpDatagram({
    source: { address: '192.168.0.1', port: 5060 },
    destination: { address: '192.168.0.199', port: 5060 },
    payload: new Uint8Array(115 - 28),
  });
  assert.equal(hex(packet.subarray(0, 20)), '45000073000040004011b861c0a80001c0a800c7');
  assert.equal(internetChecksum(packet.subarray(0, 20)), 0, 'a header with its checksum sums to zero');
});

test('the UDP header has the ports, the length and a checksum over the pseudo-header', () => {
  const payload = new TextEncoder().encode('OPTIONS sip:a@b SIP/2.0\r\n\r\n!'); // odd length
  const packet = ipv4UdpDatagram({
    source: { address: '10.0.0.1', port: 5060 },
    destination: { address: '10.0.0.2', port: 40000 },
    payload,
    identification: 0x1234,
  });
  const view = new DataView(packet.buffer);
  assert.equal(view.getUint16(2), 20 + 8 + payload.length);
  assert.equal(view.getUint16(4), 0x1234);
  assert.equal(view.getUint16(20), 5060);
  assert.equal(view.getUint16(22), 40000);
  assert.equal(view.getUint16(24), 8 + payload.length);
  assert.deepEqual(packet.subarray(28), payload);
  const udp = packet.subarray(20);
  const pseudo = Uint8Array.of(10, 0, 0, 1, 10, 0, 0, 2, 0, 17, 0, udp.length);
  const whole = new Uint8Array(pseudo.length + udp.length + 1); // padded to whole words
  whole.set(pseudo);
  whole.set(udp, pseudo.length);
  assert.equal(internetChecksum(whole), 0, 'the datagram with its checksum sums to zero');
  assert.notEqual(view.getUint16(26), 0);
});

test('addresses, ports and sizes that cannot be carried are refused', () => {
  const ok = { address: '127.0.0.1', port: 1 };
  const payload = new Uint8Array(1);
  assert.throws(
    () => ipv4UdpDatagram({ source: { address: '::1', port: 1 }, destination: ok, payload }),
    DatagramError,
  );
  assert.throws(
    () => ipv4UdpDatagram({ source: ok, destination: { address: '10.0.0.1', port: 70000 }, payload }),
    DatagramError,
  );
  assert.throws(
    () => ipv4UdpDatagram({ source: ok, destination: ok, payload: new Uint8Array(MAX_UDP_PAYLOAD_BYTES + 1) }),
    DatagramError,
  );
  assert.equal(
    ipv4UdpDatagram({ source: ok, destination: ok, payload: new Uint8Array(MAX_UDP_PAYLOAD_BYTES) }).length,
    0xffff,
  );
});
