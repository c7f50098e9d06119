/**
 * A webhook receiver written the way the README tells receivers to: it reads the raw body, verifies the signature
 * (constant-time compare, 5-minute timestamp tolerance) with verifyWebhook, and processes each delivery id once.
 * Every verified body is also checked against the body schema the API document publishes for its event type
 * (`webhooks` in /api/v1/openapi.json); a receiver with a body that does not match fails its test when it closes.
 * The tests wrap it to choose the status it answers and to see what arrived.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { verifyWebhook } from '../src/webhook-verify.js';

export interface Received {
  deliveryId: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: { id: string; type: string; occurredAt: string; data: Record<string, unknown> };
  duplicate: boolean;
}

/** What is wrong with a webhook body by the published schema of its type, or null when it matches. */
export type WebhookBodyCheck = (body: Received['body']) => string | null;

/** The check of webhook bodies against an API document's `webhooks` section (one POST per event type). */
export function webhookBodyCheck(document: { webhooks?: Record<string, unknown> }): WebhookBodyCheck {
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  const validators = new Map<string, ValidateFunction>();
  for (const type of Object.keys(document.webhooks ?? {})) {
    const pointer = `#/webhooks/${type}/post/requestBody/content/application~1json/schema`;
    validators.set(type, ajv.compile({ ...document, $ref: pointer }));
  }
  assert.ok(validators.size > 0, 'the API document publishes webhook bodies');
  return (body) => {
    const validate = validators.get(body.type);
    if (!validate) return `no body is published for the event type ${body.type}`;
    return validate(body) ? null : ajv.errorsText(validate.errors, { dataVar: 'body' });
  };
}

/** The check of the webhook bodies an app publishes, read from its API document as a client would. */
export async function publishedWebhookBodies(app: {
  inject(request: { method: 'GET'; url: string }): Promise<{ statusCode: number; json(): unknown }>;
}): Promise<WebhookBodyCheck> {
  const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(response.statusCode, 200);
  return webhookBodyCheck(response.json() as { webhooks?: Record<string, unknown> });
}

export interface ReceiverOptions {
  /** The endpoint's secret (read on every request, so a test can set it after creating the endpoint). */
  secret: () => string;
  /** Checks every verified body (see publishedWebhookBodies). */
  bodies: WebhookBodyCheck;
  /** The status to answer a verified delivery with (200 by default); a redirect answers with a Location. */
  status?: (received: Received) => number;
  /** What `now` the receiver's clock says, in unix seconds (the service may run on a virtual clock). */
  nowSec?: () => number;
  /** A receiver that answers late: each delivery is answered once this resolves. */
  answerAfter?: (received: Received) => Promise<unknown>;
}

export async function startReceiver(options: ReceiverOptions) {
  const received: Received[] = [];
  const rejected: string[] = [];
  /** Bodies that do not match their published schema: `<type> <delivery id>: <what is wrong>`. */
  const invalid: string[] = [];
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
      const problem = options.bodies(entry.body);
      if (problem) invalid.push(`${entry.body.type} ${deliveryId}: ${problem}`);
      received.push(entry);
      const status = options.status?.(entry) ?? 200;
      if (status >= 200 && status < 300) seen.add(deliveryId);
      const answer = () => {
        if (status >= 300 && status < 400) res.writeHead(status, { location: 'http://127.0.0.1:9/elsewhere' }).end();
        else res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : `no thanks (${status})`);
      };
      if (options.answerAfter) void options.answerAfter(entry).then(answer, answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    rejected,
    invalid,
    /** Stops the receiver; fails when a body it received did not match its published schema. */
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      assert.deepEqual(invalid, [], 'every webhook body matches the schema the API document publishes');
    },
  };
}

/** Closes every receiver, then fails if any of them received a body that did not match its schema. */
export async function closeReceivers(receivers: ReadonlyArray<{ close(): Promise<void> }>) {
  const closed = await Promise.allSettled(receivers.map((receiver) => receiver.close()));
  const failed = closed.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}
