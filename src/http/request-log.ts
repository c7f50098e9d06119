/**
 * The request log: one line when a request comes in and one when it is answered, at debug, or at info with
 * LOG_REQUESTS=true. Credentials in a URL (the signature of a signed recording or transcript URL) never reach it.
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/** Query parameters that are credentials: whoever holds one may fetch what the URL names. */
const SECRET_QUERY_PARAMETERS = new Set(['signature']);

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/** The URL with the value of each secret query parameter replaced, however its name is spelled or encoded. */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const query = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      return SECRET_QUERY_PARAMETERS.has(decodedName(name)) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, queryStart)}?${query.join('&')}`;
}

/** Fastify's own `req` serializer, with the URL redacted. */
export const requestLogSerializers = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: redactUrl(request.url),
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }),
};

/** Requests are logged at debug unless LOG_REQUESTS asks for info (a quiet terminal by default); errors stay errors. */
export class RequestLogController extends LogController {
  constructor(private readonly level: 'info' | 'debug') {
    super();
  }

  override incomingRequest(request: FastifyRequest) {
    request.log[this.level]({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, _request: FastifyRequest, reply: FastifyReply) {
    if (error) reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log[this.level]({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }

  override routeNotFound(request: FastifyRequest) {
    request.log[this.level](`Route ${request.method}:${redactUrl(request.url)} not found`);
  }
}
