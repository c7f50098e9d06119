/**
 * A call's recording and transcript behind signed URLs: `GET /v1/calls/{id}/asset-url` hands out a URL with
 * `expires` (unix seconds) and `signature` (HMAC-SHA256 of call id, asset and expiry under a server secret), good for
 * ASSET_URL_TTL_SECONDS; whoever holds it may fetch that one asset of that one call until then, without credentials.
 * The secret is ASSET_URL_SECRET, or one generated once and kept in the database so every instance agrees.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { CallsConfig } from '../../config.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { RangeRequest } from '../../http/range.js';
import type { TxHandle } from '../../db/repo.js';
import type { Clock } from '../../lib/clock.js';
import { safeEqual } from '../../lib/crypto.js';
import { hmacSha256Hex } from '../../lib/signatures.js';
import type { ObjectStorage } from '../../providers/storage/index.js';
import { ProviderError } from '../../providers/provider-error.js';
import type { CallsRepo } from './calls.repo.js';
import type { CallAsset, SignedAssetQuery } from './calls.schemas.js';

const ASSET_PATHS: Record<CallAsset, string> = { recording: 'recording.wav', transcript: 'transcript.json' };

export interface AssetFile {
  stream: Readable;
  size: number;
  contentType: string;
  /** The bytes sent, for a Range request; null for the whole file. */
  range: { start: number; end: number } | null;
}

export function createCallAssets(deps: { repo: CallsRepo; objects: ObjectStorage; clock: Clock; config: CallsConfig }) {
  const { repo, objects, clock, config } = deps;
  let secret: Promise<string> | undefined;

  /** Inside another module's transaction (`within`), read through it and keep nothing: it may still roll back. */
  function signingSecret(within?: TxHandle): Promise<string> {
    if (config.assetUrlSecret) return Promise.resolve(config.assetUrlSecret);
    const candidate = () => randomBytes(32).toString('base64url');
    if (within && !secret) return repo.within(within).serverSecret('asset-url-signing', candidate());
    secret ??= repo.serverSecret('asset-url-signing', candidate()).catch((error: unknown) => {
      secret = undefined;
      throw error;
    });
    return secret;
  }

  const signed = (key: string, callId: string, asset: CallAsset, expires: number) =>
    hmacSha256Hex(key, `${callId}\n${asset}\n${expires}`);
  const refused = (message: string) => new AppError('forbidden', message);

  return {
    /** A URL for one asset of a call, valid for the configured time; `origin` is the public origin of the API. */
    async signedUrl(callId: string, asset: CallAsset, origin: string, within?: TxHandle) {
      const expires = Math.floor(clock.now().getTime() / 1000) + config.assetUrlTtlSeconds;
      const signature = signed(await signingSecret(within), callId, asset, expires);
      return {
        url: `${origin}/api/v1/calls/${callId}/${ASSET_PATHS[asset]}?expires=${expires}&signature=${signature}`,
        expiresAt: new Date(expires * 1000).toISOString(),
      };
    },

    /** Throws 403 unless the query carries a valid, unexpired signature for this asset of this call. */
    async verify(callId: string, asset: CallAsset, query: SignedAssetQuery) {
      if (!query.signature || !query.expires) {
        throw refused(`This URL needs a signature: get one from GET /v1/calls/${callId}/asset-url?asset=${asset}`);
      }
      const expires = /^\d{1,12}$/.test(query.expires) ? Number(query.expires) : NaN;
      if (
        !Number.isFinite(expires) ||
        !safeEqual(query.signature.toLowerCase(), signed(await signingSecret(), callId, asset, expires))
      ) {
        throw refused('The signature of this URL is not valid for this call');
      }
      if (expires * 1000 <= clock.now().getTime()) throw refused('This signed URL has expired; ask for a new one');
    },

    /** The recording of a call, whole or a byte range, for a signed URL. */
    async recording(callId: string, query: SignedAssetQuery, range: RangeRequest | null): Promise<AssetFile> {
      await this.verify(callId, 'recording', query);
      const call = await repo.findAnyAccount(callId);
      if (!call?.recording_storage_key) throw new AppError('not_found', 'This call has no recording');
      const key = call.recording_storage_key;
      try {
        if (range && 'suffix' in range) {
          const head = await objects.get(key, { range: { start: 0, end: 0 } });
          head.stream.destroy();
          return await objects.get(key, { range: { start: Math.max(0, head.size - range.suffix) } });
        }
        return await objects.get(key, range ? { range } : {});
      } catch (error) {
        if (error instanceof ProviderError && error.code === 'not_found')
          throw new AppError('not_found', 'The recording of this call is no longer stored');
        if (error instanceof ProviderError && error.code === 'range_not_satisfiable') {
          const { size } = await objects
            .get(key, { range: { start: 0, end: 0 } })
            .then((head) => (head.stream.destroy(), head));
          throw new AppError(
            'range_not_satisfiable',
            `The range starts past the end of the ${size}-byte recording`,
            { size },
            {
              'content-range': `bytes */${size}`,
            },
          );
        }
        throw error;
      }
    },

    /** Whether a call exists in any account, for a signed transcript URL (the signature is checked first). */
    async accountOfSignedCall(callId: string, query: SignedAssetQuery): Promise<string> {
      await this.verify(callId, 'transcript', query);
      const call = await repo.findAnyAccount(callId);
      if (!call) throw notFound('Call');
      return call.account_id;
    },
  };
}

export type CallAssets = ReturnType<typeof createCallAssets>;
