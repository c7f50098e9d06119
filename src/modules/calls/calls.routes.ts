import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { parseRangeHeader } from '../../http/range.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { CallsService } from './calls.service.js';
import { callStreamRoutes } from './calls.stream-routes.js';
import {
  AssetUrl,
  AssetUrlQuery,
  CallDetail,
  CallEventList,
  CallList,
  CallTranscript,
  ContactIdParams,
  DispositionBody,
  InboundCallBody,
  InboundCallResult,
  ListCallEventsQuery,
  ListCallsQuery,
  ListEventsQuery,
  PlaceCallBody,
  PlacedCall,
  PostCallBody,
  PostCallResult,
  SignedAssetQuery,
  serializeCallList,
} from './calls.schemas.js';

const read = allow.account('account.read');
const write = allow.account('calls.write');
const tags = ['calls'];

const WavFile = {
  description: 'The recording: WAV, 16-bit PCM, 8 kHz, two channels (agent left, the other side right).',
  content: { 'audio/wav': { schema: Type.String({ format: 'binary' }) } },
};
const WavRange = {
  description: 'The requested byte range of the recording (Range: bytes=start-end).',
  content: { 'audio/wav': { schema: Type.String({ format: 'binary' }) } },
};

export function callsRoutes(
  app: App,
  { calls, config }: { calls: CallsService; config: { publicBaseUrl: string | null } },
) {
  callReadRoutes(app, calls);
  callAssetRoutes(app, calls, config);
  callActionRoutes(app, calls);
  callStreamRoutes(app, calls);
  app.register(async (scoped) => voiceProviderRoutes(scoped as unknown as App, calls));
}

/** The list, a call's detail and its transcript. */
function callReadRoutes(app: App, calls: CallsService) {
  app.get(
    '/calls',
    {
      config: { access: read },
      schema: {
        operationId: 'listCalls',
        tags,
        summary: 'List calls, newest first',
        description: 'dateFrom and dateTo bound created_at: dateFrom is inclusive, dateTo exclusive.',
        querystring: ListCallsQuery,
        response: responses(CallList),
      },
    },
    async (req, reply) => {
      const page = await calls.list(req.auth, req.query);
      reply.serializer(serializeCallList);
      return page;
    },
  );
  app.get(
    '/calls/:id',
    {
      config: { access: read },
      schema: {
        operationId: 'getCall',
        tags,
        summary: 'Full call detail with transcript and cost line items',
        params: IdParams,
        response: responses(CallDetail),
      },
    },
    async (req) => calls.get(req.auth, req.params.id),
  );
  app.get(
    '/calls/:id/transcript.json',
    {
      config: { access: allow.public },
      schema: {
        operationId: 'getCallTranscript',
        tags,
        summary: 'Transcript of a call, turn by turn',
        description:
          "For the account's members (API key or session), or for anyone with a signed URL from GET /v1/calls/{id}/asset-url?asset=transcript. Without either: 401; a signature that is missing its other half, altered, expired or for another call: 403.",
        params: IdParams,
        querystring: SignedAssetQuery,
        response: responses(CallTranscript),
      },
    },
    async (req) => calls.transcript(req.auth, req.params.id, req.query),
  );
}

/** A call's recording, and signed URLs of its recording and transcript. */
function callAssetRoutes(app: App, calls: CallsService, config: { publicBaseUrl: string | null }) {
  app.get(
    '/calls/:id/recording.wav',
    {
      config: { access: allow.public },
      schema: {
        operationId: 'getCallRecording',
        tags,
        summary: 'Stream the recording of a call (signed URL)',
        description:
          'Needs the signed URL from GET /v1/calls/{id}/asset-url?asset=recording; a missing, expired or altered signature, or one for another call, is 403. Supports Range requests (206 with Content-Range).',
        params: IdParams,
        querystring: SignedAssetQuery,
        response: { ...responses(Type.String()), 200: WavFile, 206: WavRange },
      },
    },
    async (req, reply) => {
      const file = await calls.recording(req.params.id, req.query, parseRangeHeader(req.headers.range));
      reply.header('accept-ranges', 'bytes').type(file.contentType || 'audio/wav');
      if (file.range) {
        reply
          .status(206)
          .header('content-range', `bytes ${file.range.start}-${file.range.end}/${file.size}`)
          .header('content-length', file.range.end - file.range.start + 1);
      } else {
        reply.header('content-length', file.size);
      }
      return reply.send(file.stream);
    },
  );
  app.get(
    '/calls/:id/asset-url',
    {
      config: { access: read },
      schema: {
        operationId: 'getCallAssetUrl',
        tags,
        summary: 'A signed URL for the recording or the transcript of a call',
        description: 'The URL needs no credentials and expires after 15 minutes (ASSET_URL_TTL_SECONDS).',
        params: IdParams,
        querystring: AssetUrlQuery,
        response: responses(AssetUrl),
      },
    },
    async (req) =>
      calls.assetUrl(
        req.auth,
        req.params.id,
        req.query,
        config.publicBaseUrl?.replace(/\/+$/, '') ?? `${req.protocol}://${req.host}`,
      ),
  );
}

/** A user's disposition, the event timelines, and placing a call. */
function callActionRoutes(app: App, calls: CallsService) {
  app.patch(
    '/calls/:id/disposition',
    {
      config: { access: write },
      schema: {
        operationId: 'setCallDisposition',
        tags,
        summary: 'Set the disposition of a call',
        description: "One of the account's active disposition codes; it replaces the one the agent or the engine set.",
        params: IdParams,
        body: DispositionBody,
        response: responses(CallDetail),
      },
    },
    async (req) => {
      await calls.setDisposition(req.auth, req.params.id, req.body);
      return calls.get(req.auth, req.params.id);
    },
  );
  app.get(
    '/calls/:id/events',
    {
      config: { access: read },
      schema: {
        operationId: 'listCallEvents',
        tags,
        summary: 'Events of one call, oldest first',
        params: IdParams,
        querystring: ListCallEventsQuery,
        response: responses(CallEventList),
      },
    },
    async (req) => calls.callEvents(req.auth, req.params.id, req.query),
  );
  app.get(
    '/events',
    {
      config: { access: read },
      schema: {
        operationId: 'listEvents',
        tags,
        summary: 'Call events of the account, newest first',
        querystring: ListEventsQuery,
        response: responses(CallEventList),
      },
    },
    async (req) => calls.events(req.auth, req.query),
  );
  app.post(
    '/crm/contacts/:id/call',
    {
      config: { access: write },
      schema: {
        operationId: 'placeCall',
        tags,
        summary: 'Call a contact with an agent',
        description:
          'Queues the call and answers at once; it starts when the account has a free slot. Refused, with nothing written, when the number is on the do-not-call list (409 dnc_listed), the agent is not active, or the account has no number to call from (409 conflict).',
        params: ContactIdParams,
        body: PlaceCallBody,
        response: responses(PlacedCall),
      },
    },
    async (req) => calls.place(req.auth, req.params.id, req.body),
  );
}

/**
 * Callbacks from the voice provider, signed with VOICE_PROVIDER_SECRET. The signature covers the raw body, so these
 * routes keep it: their JSON parser is their own.
 */
function voiceProviderRoutes(app: App, calls: CallsService) {
  const rawBodies = new WeakMap<FastifyRequest, string>();
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    rawBodies.set(req, body as string);
    try {
      done(null, body === '' ? undefined : JSON.parse(body as string));
    } catch (error) {
      (error as { statusCode?: number }).statusCode = 400;
      done(error as Error, undefined);
    }
  });
  const verify = async (req: FastifyRequest) => {
    const header = req.headers['x-service-signature'];
    calls.verifyProviderSignature(Array.isArray(header) ? header.join(',') : header, rawBodies.get(req) ?? '');
  };
  const access = allow.provider('voice');
  const providerTags = ['voice provider'];
  app.post(
    '/internal/voice-provider/post-call',
    {
      config: { access },
      preValidation: verify,
      schema: {
        operationId: 'reportVoiceProviderPostCall',
        tags: providerTags,
        summary: 'A voice provider reports a finished call',
        description:
          'Signed: X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under VOICE_PROVIDER_SECRET>, within 5 minutes. Idempotent: a report for a call that has already ended changes nothing (duplicate: true).',
        body: PostCallBody,
        response: responses(PostCallResult),
      },
    },
    async (req) => calls.postCall(req.body),
  );
  app.post(
    '/internal/voice-provider/inbound',
    {
      config: { access },
      preValidation: verify,
      schema: {
        operationId: 'routeVoiceProviderInbound',
        tags: providerTags,
        summary: 'A call comes in on one of the numbers',
        description:
          'Signed like the post-call report. The call is routed to the agent of the number called (`to`) and answered; a number without an agent, or with an agent that is not active, is refused (409).',
        body: InboundCallBody,
        response: responses(InboundCallResult),
      },
    },
    async (req) => calls.inbound(req.body),
  );
}
