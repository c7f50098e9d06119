/**
 * Knowledge: chunking, the index state an agent shows as its knowledge changes (re-indexed by the subscription job),
 * retrieval quality on a fixture knowledge base, and PDF import (success, encrypted, scanned, not a PDF, oversize,
 * another account's agent).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { asKey, buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { writePdf } from '../../../test/pdf-writer.js';
import { embeddingsWith, startUpstream } from '../../../test/openai-upstream.js';
import { startJobWorkers, type JobWorkers } from '../../background.js';

const HANDBOOK = readFileSync(new URL('../../../test/fixtures/knowledge/acme-handbook.md', import.meta.url), 'utf8');

let t: TestApp;
let workers: JobWorkers;
let owner: SignedUp;

before(async () => {
  t = await buildTestApp({ env: { PDF_MAX_BYTES: '4096', PDF_MAX_PAGES: '5', RATE_LIMIT_PER_MINUTE: '100000' } });
  workers = await startJobWorkers({
    db: t.infra.database.db,
    services: t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  owner = await signUp(t.app);
});
after(async () => {
  await workers.stop(5_000);
  await t.close();
});

async function indexed(user: SignedUp, id: string) {
  for (let i = 0; i < 200; i++) {
    const agent = (await call(asKey(user), 'GET', `/agents/${id}`)).json();
    if (!agent.knowledgeIndex.pending) return agent;
    await sleep(50);
  }
  throw new Error('not indexed in time');
}

test('the agent shows its index: pending after a change, then the chunks and when', async () => {
  const agent = (
    await call(asKey(owner), 'POST', '/agents', { name: 'Sol', voice: 'en-us', knowledgeBase: HANDBOOK })
  ).json();
  const ready = await indexed(owner, agent.id);
  assert.ok(ready.knowledgeIndex.chunks >= 14, JSON.stringify(ready.knowledgeIndex));
  assert.ok(Date.parse(ready.knowledgeIndex.indexedAt) > 0);

  const patched = await call(asKey(owner), 'PATCH', `/agents/${agent.id}`, {
    knowledgeBase: '# Only\nOne short fact.',
  });
  assert.equal(patched.statusCode, 200);
  const after = await indexed(owner, agent.id);
  assert.equal(after.knowledgeIndex.chunks, 1);
  const rows = await t.infra.database.db
    .selectFrom('knowledge_chunks')
    .select(['heading', 'language'])
    .where('agent_id', '=', agent.id)
    .execute();
  assert.deepEqual(rows, [{ heading: 'Only', language: 'english' }]);

  await call(asKey(owner), 'DELETE', `/agents/${agent.id}`);
  for (let i = 0; i < 100; i++) {
    const left = await t.infra.database.db
      .selectFrom('knowledge_chunks')
      .select('id')
      .where('agent_id', '=', agent.id)
      .execute();
    if (left.length === 0) return;
    await sleep(50);
  }
  assert.fail('a deleted agent keeps no chunks');
});

test('retrieval quality: for each question, the section that answers it ranks in the top 3', async () => {
  const agent = (
    await call(asKey(owner), 'POST', '/agents', { name: 'Sol', voice: 'en-us', knowledgeBase: HANDBOOK })
  ).json();
  await indexed(owner, agent.id);
  const cases: Array<[string, string]> = [
    ['How much does a system with ten panels cost?', 'Pricing and financing'],
    ['Can I pay in monthly instalments?', 'Pricing and financing'],
    ['How long is the warranty on the panels?', 'Warranty'],
    ['Does the battery work when there is a power outage?', 'Products > Batteries'],
    ['How long does the installation take?', 'Installation process'],
    ['Do I need to clean the panels?', 'Maintenance and cleaning'],
    ['I signed yesterday, can I still cancel and get my deposit back?', 'Cancellation and refunds'],
    ['Can you install on a flat roof?', 'Roof types'],
    ['Are there any subsidies or tax reductions?', 'Subsidies and tax benefits'],
    ['What are your support opening hours on Saturday?', 'Customer support'],
    ['Do you pay me for the energy I send to the grid?', 'Net metering and selling energy'],
    ['What size are your inverters?', 'Products > Inverters'],
    ['Where is your head office?', 'Company'],
    ['Will the app tell me if something is wrong with my panels?', 'Monitoring app'],
  ];
  const misses: string[] = [];
  for (const [question, heading] of cases) {
    const chunks = await t.services.knowledge.retrieve(owner.accountId, agent.id, question);
    const top = chunks.slice(0, 3).map((chunk) => chunk.heading);
    if (!top.some((h) => h.endsWith(heading))) misses.push(`${question} -> ${top.join(' | ')}`);
    assert.ok(
      chunks.reduce((sum, chunk) => sum + chunk.tokens, 0) <= t.config.knowledge.budgetTokens,
      'within the budget',
    );
  }
  assert.deepEqual(misses, []);
  assert.deepEqual(
    await t.services.knowledge.retrieve(owner.accountId, agent.id, 'the and of'),
    [],
    'stop words alone match nothing',
  );
});

function form(parts: Array<{ name: string; value: string | Buffer; filename?: string }>) {
  const boundary = '----parley-test-boundary';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    const type = part.filename ? '\r\nContent-Type: application/pdf' : '';
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`),
      Buffer.from(part.value),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const importPdf = (user: SignedUp, parts: Parameters<typeof form>[0]) => {
  const { payload, headers } = form(parts);
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/kb/import-pdf',
    headers: { ...user.headers, ...headers },
    payload,
  });
};

test('PDF import: appended or replacing, as a new version, indexed at once; bad files change nothing', async () => {
  const agent = (
    await call(asKey(owner), 'POST', '/agents', { name: 'Pia', voice: 'en-us', knowledgeBase: '# Hours\nOpen daily.' })
  ).json();
  const pdf = writePdf([['Price list', 'The basic plan costs 10 euros.'], ['Delivery takes three days.']]);
  const appended = await importPdf(owner, [
    { name: 'agentId', value: agent.id },
    { name: 'file', value: pdf, filename: 'prices.pdf' },
  ]);
  assert.equal(appended.statusCode, 200, appended.body);
  const result = appended.json();
  assert.deepEqual(
    { ...result, characters: undefined },
    { agentId: agent.id, version: 2, mode: 'append', pages: 2, characters: undefined, chunks: 1 },
  );
  assert.ok(result.characters > 40);
  let read = (await call(asKey(owner), 'GET', `/agents/${agent.id}`)).json();
  assert.match(
    read.knowledgeBase,
    /^# Hours\nOpen daily\.\n\nPrice list\nThe basic plan costs 10 euros\.\n\nDelivery takes three days\.$/,
  );
  assert.deepEqual(read.knowledgeIndex.pending, false, 'indexed by the import itself');

  const replaced = await importPdf(owner, [
    { name: 'file', value: writePdf([['Only this now.']]), filename: 'new.pdf' },
    { name: 'mode', value: 'replace' },
    { name: 'agentId', value: agent.id },
  ]);
  assert.equal(replaced.statusCode, 200, replaced.body);
  assert.equal(replaced.json().version, 3);
  read = (await call(asKey(owner), 'GET', `/agents/${agent.id}`)).json();
  assert.equal(read.knowledgeBase, 'Only this now.');

  const refusals: Array<[string, Parameters<typeof form>[0], number, string | undefined]> = [
    [
      'encrypted',
      [
        { name: 'agentId', value: agent.id },
        { name: 'file', value: writePdf([['secret']], { encrypted: true }), filename: 'e.pdf' },
      ],
      400,
      'encrypted',
    ],
    [
      'scanned',
      [
        { name: 'agentId', value: agent.id },
        { name: 'file', value: writePdf([['x']], { scanned: true }), filename: 's.pdf' },
      ],
      400,
      'no_text',
    ],
    [
      'not a PDF',
      [
        { name: 'agentId', value: agent.id },
        { name: 'file', value: 'just some text', filename: 'x.pdf' },
      ],
      400,
      'not_pdf',
    ],
    [
      'too many pages',
      [
        { name: 'agentId', value: agent.id },
        { name: 'file', value: writePdf(Array.from({ length: 6 }, () => ['p'])), filename: 'p.pdf' },
      ],
      400,
      'too_many_pages',
    ],
    [
      'oversize',
      [
        { name: 'agentId', value: agent.id },
        {
          name: 'file',
          value: writePdf([['x'.repeat(80)], ...Array.from({ length: 4 }, () => ['y'.repeat(900)])]),
          filename: 'big.pdf',
        },
      ],
      413,
      undefined,
    ],
    ['no file', [{ name: 'agentId', value: agent.id }], 400, undefined],
    [
      'bad mode',
      [
        { name: 'agentId', value: agent.id },
        { name: 'mode', value: 'merge' },
        { name: 'file', value: pdf, filename: 'a.pdf' },
      ],
      400,
      undefined,
    ],
  ];
  for (const [what, parts, status, reason] of refusals) {
    const response = await importPdf(owner, parts);
    assert.equal(response.statusCode, status, `${what}: ${response.body}`);
    const body = errorBody(response);
    if (reason) {
      assert.equal(body.details.reason, reason, what);
      // The dashboard shows the refusal beside the file input.
      assert.deepEqual(body.details.fields, [{ field: 'body/file', message: body.message }], what);
    }
    if (body.error === 'validation_failed') assert.ok(Array.isArray(body.details.fields), `${what}: fields listed`);
  }
  const json = await call(asKey(owner), 'POST', '/kb/import-pdf', { agentId: agent.id });
  assert.equal(json.statusCode, 415);
  read = (await call(asKey(owner), 'GET', `/agents/${agent.id}`)).json();
  assert.equal(read.version, 3, 'no refused import saved a version');
  assert.equal(read.knowledgeBase, 'Only this now.');

  const stranger = await signUp(t.app);
  const foreign = await importPdf(stranger, [
    { name: 'agentId', value: agent.id },
    { name: 'file', value: pdf, filename: 'a.pdf' },
  ]);
  assert.equal(foreign.statusCode, 404);
  assert.equal(errorBody(foreign).error, 'not_found');
});

test('with an embeddings upstream, chunks get vectors and ranking blends in cosine similarity; a failing upstream leaves full-text search', async () => {
  const upstream = await startUpstream();
  upstream.embeddings = embeddingsWith({ covered: 'warranty', coverage: 'warranty', breaks: 'defective' });
  const withVectors = await buildTestApp({
    env: { EMBEDDINGS_BASE_URL: upstream.baseUrl, EMBEDDINGS_MODEL: 'bag-of-words', RATE_LIMIT_PER_MINUTE: '100000' },
  });
  try {
    const user = await signUp(withVectors.app);
    const agent = (
      await call(asKey(user), 'POST', '/agents', { name: 'Sol', voice: 'en-us', knowledgeBase: HANDBOOK })
    ).json();
    const { chunks } = await withVectors.services.knowledge.reindex(user.accountId, agent.id);
    const rows = await withVectors.infra.database.db
      .selectFrom('knowledge_chunks')
      .select(['heading', 'embedding'])
      .where('agent_id', '=', agent.id)
      .execute();
    assert.equal(rows.length, chunks);
    assert.ok(
      rows.every((row) => row.embedding?.length === 256),
      'every chunk has its vector',
    );
    assert.equal(upstream.requests.filter((r) => r.path === '/v1/embeddings').at(-1)!.body.model, 'bag-of-words');

    // No word of this question is in the warranty section; the embedding model knows "covered" means warranty.
    const question = 'Am I covered?';
    const plain = (
      await call(asKey(owner), 'POST', '/agents', { name: 'Plain', voice: 'en-us', knowledgeBase: HANDBOOK })
    ).json().id;
    await t.services.knowledge.reindex(owner.accountId, plain);
    const fullText = await t.services.knowledge.retrieve(owner.accountId, plain, question);
    assert.ok(fullText.length > 0, 'full-text search answers something');
    assert.ok(
      !fullText.slice(0, 3).some((chunk) => chunk.heading.endsWith('Warranty')),
      'full-text search alone misses it',
    );
    const hybrid = await withVectors.services.knowledge.retrieve(user.accountId, agent.id, question);
    assert.ok(
      hybrid.slice(0, 3).some((chunk) => chunk.heading.endsWith('Warranty')),
      hybrid.map((c) => c.heading).join(' | '),
    );
    assert.equal(upstream.requests.at(-1)!.body.input[0], question, 'the turn was embedded');

    upstream.embeddings = (_req, res) => {
      res.writeHead(503);
      res.end('down');
    };
    await call(asKey(user), 'PATCH', `/agents/${agent.id}`, {
      knowledgeBase: `${HANDBOOK}\n\n## Extra\nWe also sell heat pumps.`,
    });
    const again = await withVectors.services.knowledge.reindex(user.accountId, agent.id);
    assert.equal(again.chunks, chunks + 1);
    const found = await withVectors.services.knowledge.retrieve(user.accountId, agent.id, 'Do you sell heat pumps?');
    assert.ok(found[0]?.heading.endsWith('Extra'), 'full-text search still answers');
  } finally {
    await withVectors.close();
    await upstream.close();
  }
});
