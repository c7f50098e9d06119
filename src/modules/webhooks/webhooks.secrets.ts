/**
 * Signing secrets: made once per endpoint (and per rotation), stored encrypted (AES-256-GCM) under WEBHOOK_SECRET_KEY
 * or a key generated once and kept in the database (signing needs the secret itself, so a hash cannot do), and the
 * signature header of each attempt: one v1 per secret in force, two while a rotated-out secret overlaps the new one.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { WebhooksConfig } from '../../config.js';
import type { EndpointRow, WebhooksRepo } from './webhooks.repo.js';

/** An endpoint's secrets, as stored. */
export type EndpointSecrets = Pick<
  EndpointRow,
  'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at'
>;

/** Decrypted secrets kept by their stored form (which changes with every rotation), so a busy endpoint decrypts once. */
const DECRYPTED_KEPT = 1000;

export const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

const hmacHex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

/** Whether the rotated-out secret still signs, beside the current one. */
export const rotationActive = (secrets: EndpointSecrets, now: Date) =>
  secrets.previous_secret_encrypted !== null &&
  secrets.previous_secret_expires_at !== null &&
  secrets.previous_secret_expires_at > now;

export function createWebhookSecrets(deps: { config: WebhooksConfig; repo: Pick<WebhooksRepo, 'encryptionKey'> }) {
  const { config, repo } = deps;
  let key: Promise<Buffer> | undefined;
  const encryptionKey = () =>
    (key ??= (
      config.secretKey ? Promise.resolve(config.secretKey) : repo.encryptionKey(randomBytes(32).toString('base64url'))
    )
      .then((material) => createHash('sha256').update(material).digest())
      .catch((error: unknown) => {
        key = undefined;
        throw error;
      }));

  const decrypted = new Map<string, string>();
  async function decrypt(stored: string): Promise<string> {
    const known = decrypted.get(stored);
    if (known !== undefined) return known;
    const [, iv, tag, data] = stored.split(':');
    const decipher = createDecipheriv('aes-256-gcm', await encryptionKey(), Buffer.from(iv!, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
    const secret = Buffer.concat([decipher.update(Buffer.from(data!, 'base64url')), decipher.final()]).toString('utf8');
    if (decrypted.size >= DECRYPTED_KEPT) decrypted.clear();
    decrypted.set(stored, secret);
    return secret;
  }

  return {
    /** The stored form of a secret: `v1:<iv>:<tag>:<ciphertext>`. */
    async encrypt(secret: string): Promise<string> {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', await encryptionKey(), iv);
      const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), data].map((part) => part.toString('base64url'));
      return ['v1', ...parts].join(':');
    },

    /** Signs the body under the current secret, and under the previous one while a rotation overlaps. */
    async signatureFor(endpoint: EndpointSecrets, body: string, now: Date) {
      const t = Math.floor(now.getTime() / 1000);
      const secrets = [await decrypt(endpoint.secret_encrypted)];
      if (rotationActive(endpoint, now)) secrets.push(await decrypt(endpoint.previous_secret_encrypted!));
      return { t, header: [`t=${t}`, ...secrets.map((secret) => `v1=${hmacHex(secret, body)}`)].join(',') };
    },
  };
}

export type WebhookSecrets = ReturnType<typeof createWebhookSecrets>;
