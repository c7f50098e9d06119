/**
 * Knowledge: each agent's knowledge base, chunked (knowledge.chunker.ts) and indexed for PostgreSQL full-text search
 * in the agent's language; with an embeddings upstream configured, chunks also get vectors and ranking is a hybrid of
 * the two. Re-indexing follows every change of the knowledge (a subscription to agent events); each turn of a
 * conversation retrieves the best chunks for the caller's last words, within a token budget.
 */
import type { Logger } from 'pino';
import type { KnowledgeConfig } from '../../config.js';
import type { Auth } from '../../lib/caller.js';
import { AppError, invalidField } from '../../lib/errors.js';
import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { DomainEvent } from '../../events/domain-events.js';
import { cosineSimilarity, createEmbeddingsClient, type EmbeddingsClient } from '../../providers/llm/index.js';
import type { AgentsService } from '../agents/agents.service.js';
import { PROMPT_LIMITS } from '../agents/agents.prompt.js';
import { chunkKnowledge } from './knowledge.chunker.js';
import { pdfText } from './knowledge.pdf.js';
import type { KnowledgeRepo, RankedChunk } from './knowledge.repo.js';
import type { ImportPdfFields } from './knowledge.schemas.js';

export type AgentsForKnowledge = Pick<AgentsService, 'forCall' | 'get' | 'update'>;

/** The text-search configuration of a language (the first part of a BCP 47 tag or voice id: "en-us" -> english). */
const LANGUAGE_CONFIGS: Record<string, string> = {
  ar: 'arabic',
  ca: 'catalan',
  da: 'danish',
  de: 'german',
  el: 'greek',
  en: 'english',
  es: 'spanish',
  eu: 'basque',
  fi: 'finnish',
  fr: 'french',
  ga: 'irish',
  hi: 'hindi',
  hu: 'hungarian',
  hy: 'armenian',
  id: 'indonesian',
  it: 'italian',
  lt: 'lithuanian',
  nb: 'norwegian',
  ne: 'nepali',
  nl: 'dutch',
  nn: 'norwegian',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

/** An agent's language, from its voice ("en-us", "de+f3"); 'simple' (no stemming, no stop words) when unknown. */
export function searchConfigOf(voiceId: string | null): string {
  const language = voiceId?.toLowerCase().match(/^([a-z]{2,3})(?:[-_+].*)?$/)?.[1];
  return (language && LANGUAGE_CONFIGS[language]) || 'simple';
}

export interface RetrievedChunk {
  id: string;
  seq: number;
  heading: string;
  content: string;
  tokens: number;
  score: number;
}

/** Candidates ranked by full-text search before the budget is filled. */
const CANDIDATES = 24;
/** Chunks per turn at most, whatever the budget. */
const MAX_CHUNKS = 6;
/** Words of the question that count: a turn is short, a pasted document is not a question. */
const MAX_QUERY_CHARS = 2000;

export interface KnowledgeDeps {
  repo: KnowledgeRepo;
  clock: Clock;
  config: KnowledgeConfig;
  agents: AgentsForKnowledge;
  log: Logger;
  /** Replaces the configured embeddings upstream (benchmarks). */
  embeddings?: EmbeddingsClient | null;
}

export function createKnowledgeService(deps: KnowledgeDeps) {
  const { repo, clock, config, agents, log } = deps;
  const embeddings =
    deps.embeddings !== undefined
      ? deps.embeddings
      : config.embeddings
        ? createEmbeddingsClient(config.embeddings)
        : null;
  const sourceHash = (language: string, knowledge: string) =>
    sha256Hex(`${language}\n${embeddings?.model ?? ''}\n${knowledge}`);

  /** Builds the agent's chunks from `knowledge` unless they already are; answers the chunk count. */
  async function index(accountId: string, agentId: string, knowledge: string, voiceId: string | null) {
    const language = searchConfigOf(voiceId);
    const hash = sourceHash(language, knowledge);
    const current = await repo.findIndex(accountId, agentId);
    if (current?.source_hash === hash) return { chunks: current.chunks, changed: false };
    const chunks = chunkKnowledge(knowledge);
    let vectors: number[][] | null = null;
    if (embeddings && chunks.length > 0) {
      try {
        vectors = await embeddings.embed(
          chunks.map((chunk) => (chunk.heading ? `${chunk.heading}\n${chunk.content}` : chunk.content)),
        );
      } catch (error) {
        // Full-text search still works; the next change of the knowledge tries the vectors again.
        log.warn({ err: error, agentId }, 'knowledge embeddings failed; indexed for full-text search only');
      }
    }
    await repo.transaction(async (tx) => {
      await tx.lockAgent(accountId, agentId);
      await tx.replace(accountId, agentId, {
        chunks: chunks.map((chunk, i) => ({ ...chunk, embedding: vectors?.[i] ?? null })),
        language,
        sourceHash: hash,
        characters: knowledge.length,
        at: clock.now(),
      });
    });
    return { chunks: chunks.length, changed: true };
  }

  /** Re-indexes the agent as it is now (or drops its chunks when it is gone). Idempotent. */
  async function reindex(accountId: string, agentId: string) {
    const agent = await agents.forCall(accountId, agentId);
    if (!agent) {
      await repo.transaction(async (tx) => tx.remove(accountId, agentId));
      return { chunks: 0, changed: true };
    }
    return index(accountId, agentId, agent.parts.knowledgeBase, agent.voiceId);
  }

  /** Hybrid ranking: full-text rank and cosine similarity, each scaled to 0..1, half and half. */
  async function hybrid(
    accountId: string,
    agentId: string,
    text: string,
    ranked: RankedChunk[],
  ): Promise<RankedChunk[]> {
    if (!embeddings) return ranked;
    const stored = await repo.embedded(accountId, agentId);
    if (stored.length === 0) return ranked;
    let query: number[];
    try {
      [query] = (await embeddings.embed([text])) as [number[]];
    } catch (error) {
      log.warn({ err: error, agentId }, 'query embedding failed; ranking by full-text search only');
      return ranked;
    }
    const best = Math.max(...ranked.map((chunk) => chunk.rank), 1e-9);
    const textRank = new Map(ranked.map((chunk) => [chunk.id, chunk.rank / best]));
    return stored
      .map((chunk) => ({
        ...chunk,
        rank: 0.5 * (textRank.get(chunk.id) ?? 0) + 0.5 * Math.max(0, cosineSimilarity(query, chunk.embedding!)),
      }))
      .sort((a, b) => b.rank - a.rank || a.seq - b.seq)
      .slice(0, CANDIDATES);
  }

  return {
    reindex,

    /** For the agent subscription: re-index when the knowledge or the language (the voice) may have changed. */
    async onAgentEvent(event: DomainEvent) {
      const changed = (event.data as { changed?: unknown }).changed;
      if (
        event.type === 'agent.updated' &&
        Array.isArray(changed) &&
        !changed.some((name) => name === 'knowledgeBase' || name === 'voice')
      ) {
        return { skipped: 'knowledge unchanged' };
      }
      return reindex(event.accountId, event.subject.id);
    },

    /** What GET /v1/agents/{id} shows: the chunks indexed, when, and whether a change is still waiting to be indexed. */
    async indexState(accountId: string, agentId: string, knowledge: string, voiceId: string | null) {
      const row = await repo.findIndex(accountId, agentId);
      const pending = row
        ? row.source_hash !== sourceHash(searchConfigOf(voiceId), knowledge)
        : knowledge.trim() !== '';
      return { chunks: row?.chunks ?? 0, indexedAt: row?.indexed_at.toISOString() ?? null, pending };
    },

    /**
     * The agent's best chunks for `text` (the caller's last words), best first, within `budgetTokens` tokens. Answers
     * nothing for blank text or an agent without indexed knowledge.
     */
    async retrieve(
      accountId: string,
      agentId: string,
      text: string,
      budgetTokens = config.budgetTokens,
    ): Promise<RetrievedChunk[]> {
      const question = text.slice(-MAX_QUERY_CHARS).replace(/\u0000/g, '');
      if (!question.trim()) return [];
      const row = await repo.findIndex(accountId, agentId);
      if (!row || row.chunks === 0) return [];
      const ranked = await hybrid(
        accountId,
        agentId,
        question,
        await repo.search(accountId, agentId, row.language, question, CANDIDATES, row.chunks),
      );
      const chosen: RetrievedChunk[] = [];
      let used = 0;
      for (const chunk of ranked) {
        if (chosen.length >= MAX_CHUNKS) break;
        if (used + chunk.tokens > budgetTokens) continue;
        used += chunk.tokens;
        chosen.push({
          id: chunk.id,
          seq: chunk.seq,
          heading: chunk.heading,
          content: chunk.content,
          tokens: chunk.tokens,
          score: chunk.rank,
        });
      }
      return chosen;
    },

    /**
     * POST /v1/kb/import-pdf: the PDF's text appended to the agent's knowledge base (or in its place), saved as a new
     * version of the agent and indexed at once. Anything refused changes nothing.
     */
    async importPdf(auth: Auth, fields: ImportPdfFields, file: Buffer) {
      const agent = await agents.get(auth, fields.agentId);
      if (file.length > config.pdfMaxBytes) {
        throw new AppError('payload_too_large', `The PDF is larger than ${config.pdfMaxBytes} bytes`, {
          limitBytes: config.pdfMaxBytes,
        });
      }
      const pdf = await pdfText(file, {
        maxPages: config.pdfMaxPages,
        maxSeconds: config.pdfMaxSeconds,
        maxMemoryMb: config.pdfMaxMemoryMb,
      });
      const knowledge =
        fields.mode === 'replace' || !agent.knowledgeBase.trim()
          ? pdf.text
          : `${agent.knowledgeBase.trimEnd()}\n\n${pdf.text}`;
      if (knowledge.length > PROMPT_LIMITS.knowledgeBase) {
        throw invalidField(
          'body/file',
          `would make the knowledge base ${knowledge.length} characters long; the limit is ${PROMPT_LIMITS.knowledgeBase}`,
        );
      }
      const updated = await agents.update(auth, agent.id, { knowledgeBase: knowledge });
      const indexed = await index(auth.accountId, agent.id, knowledge, updated.voiceId);
      return {
        agentId: agent.id,
        version: updated.version,
        mode: fields.mode,
        pages: pdf.pages,
        characters: pdf.text.length,
        chunks: indexed.chunks,
      };
    },
  };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;
