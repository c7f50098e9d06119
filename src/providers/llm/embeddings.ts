/**
 * OpenAI-compatible embeddings: `POST {baseUrl}/embeddings` with a batch of texts; answers one vector per text, in order.
 */
import { postJson } from '../openai-http.js';
import { ProviderError } from '../provider-error.js';

export interface EmbeddingsOptions {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
}

export interface EmbeddingsClient {
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

const PROVIDER = 'openai-embeddings';
/** Texts per request: servers cap the batch (OpenAI at 2,048); smaller batches fail less at once. */
const BATCH = 64;

export function createEmbeddingsClient(options: EmbeddingsOptions): EmbeddingsClient {
  const endpoint = {
    provider: PROVIDER,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs,
  };

  async function batch(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const response = await postJson(endpoint, '/embeddings', { model: options.model, input: texts }, signal);
    let body: { data?: Array<{ index?: number; embedding?: unknown }> };
    try {
      body = (await response.body.json()) as typeof body;
    } catch (error) {
      throw error instanceof SyntaxError
        ? new ProviderError(PROVIDER, 'bad_response', 'the embeddings answer is not JSON')
        : response.failure(error);
    } finally {
      response.done();
    }
    const vectors: number[][] = new Array(texts.length);
    for (const [position, item] of (body.data ?? []).entries()) {
      const index = item.index ?? position;
      if (
        !Array.isArray(item.embedding) ||
        !item.embedding.every((x) => typeof x === 'number') ||
        index < 0 ||
        index >= texts.length
      ) {
        throw new ProviderError(
          PROVIDER,
          'bad_response',
          'the embeddings answer holds an item that is not a vector of numbers',
        );
      }
      vectors[index] = item.embedding as number[];
    }
    if (vectors.filter(Boolean).length !== texts.length)
      throw new ProviderError(PROVIDER, 'bad_response', 'the embeddings answer lacks some inputs');
    return vectors;
  }

  return {
    model: options.model,
    async embed(texts, signal) {
      const vectors: number[][] = [];
      for (let start = 0; start < texts.length; start += BATCH)
        vectors.push(...(await batch(texts.slice(start, start + BATCH), signal)));
      return vectors;
    },
  };
}

export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA && normB ? dot / Math.sqrt(normA * normB) : 0;
}
