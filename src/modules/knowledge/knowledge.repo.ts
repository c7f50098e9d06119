import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory, Tx } from '../../events/outbox.js';
import { newId } from '../../lib/ids.js';
import type { KnowledgeChunk } from './knowledge.chunker.js';

export interface RankedChunk {
  id: string;
  seq: number;
  heading: string;
  content: string;
  tokens: number;
  rank: number;
  embedding: number[] | null;
}

/** Words of a question looked up at most. */
const MAX_QUERY_LEXEMES = 32;
/** A word in more chunks than this is too common to search by (unless all are: then the rarest few). */
const COMMON_CHUNKS = 150;
const RAREST_KEPT = 3;

/** The prefix of an agent's lexemes in the scoped column: its id, hex only. */
const scopePrefix = (agentId: string) => `${agentId.replaceAll('-', '')}_`;

/** Inserted in batches: one statement per 500 chunks keeps each under PostgreSQL's parameter limit. */
const INSERT_BATCH = 500;

export function knowledgeQueries(db: Executor) {
  return {
    findIndex(accountId: string, agentId: string) {
      return db
        .selectFrom('knowledge_indexes')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .executeTakeFirst();
    },

    /** Serializes re-indexing of one agent: two jobs for it run one after the other. */
    async lockAgent(accountId: string, agentId: string) {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`knowledge:${accountId}:${agentId}`}, 0))`.execute(db);
    },

    /** Replaces the agent's chunks and index row with these. */
    async replace(
      accountId: string,
      agentId: string,
      input: {
        chunks: Array<KnowledgeChunk & { embedding?: number[] | null }>;
        language: string;
        sourceHash: string;
        characters: number;
        at: Date;
      },
    ) {
      await db
        .deleteFrom('knowledge_chunks')
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .execute();
      for (let start = 0; start < input.chunks.length; start += INSERT_BATCH) {
        const batch = input.chunks.slice(start, start + INSERT_BATCH);
        await db
          .insertInto('knowledge_chunks')
          .values(
            batch.map((chunk) => ({
              id: newId(),
              account_id: accountId,
              agent_id: agentId,
              seq: chunk.seq,
              heading: chunk.heading,
              content: chunk.content,
              tokens: chunk.tokens,
              language: input.language,
              embedding: chunk.embedding ?? null,
            })),
          )
          .execute();
      }
      await sql`
        UPDATE knowledge_chunks SET scoped = array_to_tsvector(ARRAY(SELECT ${scopePrefix(agentId)} || lexeme FROM unnest(search) AS t(lexeme)))
        WHERE account_id = ${accountId} AND agent_id = ${agentId}`.execute(db);
      const row = {
        source_hash: input.sourceHash,
        language: input.language,
        chunks: input.chunks.length,
        characters: input.characters,
        embedded: input.chunks.length > 0 && input.chunks.every((chunk) => chunk.embedding),
        indexed_at: input.at,
      };
      await db
        .insertInto('knowledge_indexes')
        .values({ account_id: accountId, agent_id: agentId, ...row })
        .onConflict((oc) => oc.columns(['account_id', 'agent_id']).doUpdateSet(row))
        .execute();
    },

    async remove(accountId: string, agentId: string) {
      await db
        .deleteFrom('knowledge_chunks')
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .execute();
      await db
        .deleteFrom('knowledge_indexes')
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .execute();
    },

    /**
     * The agent's chunks that share a word with `text`, best first (ts_rank_cd, normalized by length). The words of
     * the question are OR-ed (a turn of conversation rarely holds every word of the passage it is about), after
     * dropping the words found in too many chunks: like IDF, they say little about which chunk answers, and ranking
     * every chunk that holds one costs a large knowledge base dearly. When every word is that common, the rarest
     * few are kept. Words are looked up through the agent-scoped GIN index (see the migration).
     */
    search(
      accountId: string,
      agentId: string,
      language: string,
      text: string,
      limit: number,
      agentChunks = Number.MAX_SAFE_INTEGER,
    ) {
      const prefix = scopePrefix(agentId);
      // No word can be in more chunks than the agent has: below the threshold, every word is kept without counting.
      const chosen =
        agentChunks <= COMMON_CHUNKS
          ? sql`chosen AS (SELECT lexeme FROM lexemes)`
          : sql`frequency AS (
          SELECT l.lexeme,
            (SELECT count(*) FROM knowledge_chunks c
             WHERE c.account_id = ${accountId} AND c.scoped @@ quote_literal(${prefix} || l.lexeme)::tsquery) AS chunks
          FROM lexemes l
        ),
        chosen AS (
          SELECT lexeme FROM frequency
          WHERE chunks > 0 AND (chunks <= ${COMMON_CHUNKS} OR lexeme IN (
            SELECT lexeme FROM frequency WHERE chunks > 0 ORDER BY chunks, lexeme LIMIT ${RAREST_KEPT}))
        )`;
      return sql<RankedChunk>`
        WITH lexemes AS (
          SELECT DISTINCT lexeme FROM unnest(to_tsvector(${language}::regconfig, ${text})) AS t(lexeme)
          WHERE strpos(lexeme, chr(92)) = 0
          LIMIT ${MAX_QUERY_LEXEMES}
        ),
        ${chosen},
        words AS (
          -- Cast, not to_tsquery: the lexemes are already normalized, and a parser would split the prefix off.
          SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS query,
                 string_agg(quote_literal(${prefix} || lexeme), ' | ')::tsquery AS scoped
          FROM chosen
        ),
        hits AS MATERIALIZED (
          SELECT c.id FROM knowledge_chunks c, words WHERE c.account_id = ${accountId} AND c.scoped @@ words.scoped
        )
        SELECT c.id, c.seq, c.heading, c.content, c.tokens, ts_rank_cd(c.search, words.query, 1)::float8 AS rank, c.embedding
        FROM hits JOIN knowledge_chunks c ON c.id = hits.id, words
        WHERE c.account_id = ${accountId} AND c.agent_id = ${agentId}
        ORDER BY rank DESC, c.seq
        LIMIT ${limit}`
        .execute(db)
        .then((result) => result.rows);
    },

    /** Every chunk of the agent with an embedding (the vector half of hybrid ranking). */
    embedded(accountId: string, agentId: string) {
      return db
        .selectFrom('knowledge_chunks')
        .select(['id', 'seq', 'heading', 'content', 'tokens', 'embedding'])
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .where('embedding', 'is not', null)
        .execute();
    },
  };
}

export type KnowledgeTx = Tx<ReturnType<typeof knowledgeQueries>>;

export function createKnowledgeRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, knowledgeQueries);
}

export type KnowledgeRepo = ReturnType<typeof createKnowledgeRepo>;
