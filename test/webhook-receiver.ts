/**
 * A webhook receiver written the way the README tells receivers to: it reads the raw body, verifies the signature
 * (constant-time compare, 5-minute timestamp tolerance) with verifyWebhook, and processes each delivery id once.
 * The tests wrap it to choose the status it answers and to see what arrived.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../src/webhook-verify.js';

export interface Received {
  deliveryId: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: { id: string; type: string; occurredAt: string; data: Record<string, unknown> };
  duplicate: boolean;
}

export interface ReceiverOptions {
  /** The endpoint's secret (read on every request, so a test can set it after creating the endpoint). */
  secret: () => string;
  /** The status to answer a verified delivery with (200 by default); a redirect answers with a Location. */
  status?: (received: Received) => number;
  /** What `now` the receiver's clock says, in unix seconds (the service may run on a virtual clock). */
  nowSec?: () => number;
  /** A slow receiver: it answers this long after a delivery arrived. */
  delayMs?: number;
}

export async function startReceiver(options: ReceiverOptions) {
  const received: Received[] = [];
  const rejected: string[] = [];
  // Delivery ids already processed: a redelivery or a retry that arrives twice is acknowledged, not processed again.
  const seen = new Set<string>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const verified = verifyWebhook(raw, req.headers, options.secret(), {
        toleranceSec: 300,
        ...(options.nowSec ? { nowSec: options.nowSec() } : {}),
      });
      if (!verified.valid) {
        rejected.push(verified.reason);
        res.writeHead(400).end(verified.reason);
        return;
      }
      const deliveryId = verified.deliveryId ?? '';
      const entry: Received = {
        deliveryId,
        headers: req.headers,
        rawBody: raw.toString('utf8'),
        body: JSON.parse(raw.toString('utf8')),
        duplicate: seen.has(deliveryId),
      };
      received.push(entry);
      const status = options.status?.(entry) ?? 200;
      if (status >= 200 && status < 300) seen.add(deliveryId);
      const answer = () => {
        if (status >= 300 && status < 400) res.writeHead(status, { location: 'http://127.0.0.1:9/elsewhere' }).end();
        else res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : `no thanks (${status})`);
      };
      if (options.delayMs) setTimeout(answer, options.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    rejected,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
