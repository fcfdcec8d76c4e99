import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ConflictError, DependencyUnavailable, DomainError, type DomainErrorKind } from '../../../platform/shared/domain-errors.ts';
import {
  isPostgresConcurrencyFailure,
  isPostgresDataException,
  isPostgresUnavailable,
  outageReporter,
  serviceUnavailable,
  type OutageReporter,
} from '../dependency-errors.ts';
import { HttpProblem, serializeProblem } from '../problem.ts';
import { API_VERSION, API_VERSION_HEADER } from '../api-version.ts';

const statusOfKind: Record<DomainErrorKind, number> = {
  malformed: 400,
  forbidden: 403,
  'not-found': 404,
  conflict: 409,
  invalid: 422,
  'rate-limited': 429,
  'upstream-failed': 502,
  'upstream-timed-out': 504,
};

/** The one mapping of domain errors to HTTP: a status per kind, the code as the type's slug (its title the catalogue's), Retry-After as a header. */
function problemOfDomainError(error: DomainError): HttpProblem {
  return new HttpProblem(statusOfKind[error.kind], error.code, error.detail, {
    ...(error.errors === undefined ? {} : { errors: error.errors }),
    extensions: error.members,
    headers: error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) },
  });
}

/**
 * The problem a domain error, or a problem the HTTP layer raised itself, stands for. Undefined for
 * anything else (an outage, a bug, a framework error), which problemFor below answers all the same.
 */
export function knownProblem(error: unknown): HttpProblem | undefined {
  if (error instanceof HttpProblem) return error;
  if (error instanceof DomainError) return problemOfDomainError(error);
  return undefined;
}

/** Fastify's own errors, translated into problems a client can act on. */
function fromFastifyError(error: FastifyError): HttpProblem | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpProblem(413, 'body-too-large', 'The request body is larger than this service accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpProblem(415, 'unsupported-media-type', 'Send the body as application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpProblem(400, 'malformed-json', 'The request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HttpProblem(400, 'bad-request', 'The Content-Length does not match the body');
    case 'FST_ERR_BAD_URL':
      return new HttpProblem(400, 'bad-url', 'The URL path is not valid (a malformed percent-encoding)');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new HttpProblem(414, 'uri-too-long', 'A path parameter is longer than any identifier of this API');
    default:
      return undefined;
  }
}

/** For callers that have no reporter of their own (the console's pages): rate-limited warnings. */
const unmonitoredOutages = outageReporter();

/**
 * The problem an error becomes. Dependency outages are 503 (retry is safe, and `outages` is told,
 * which keeps the log to a line when the dependency goes and one when it is back), deadlocks and
 * serialization failures 409 (retry is safe too), data exceptions that slipped past validation 422
 * (logged at warn: the edge validation has a gap to close); anything else unexpected is a 500
 * logged with its stack.
 */
export function problemFor(error: FastifyError | Error, log: FastifyBaseLogger, outages: OutageReporter = unmonitoredOutages): HttpProblem {
  const known = knownProblem(error);
  if (known) return known;
  if (error instanceof DependencyUnavailable || isPostgresUnavailable(error)) {
    const dependency = error instanceof DependencyUnavailable ? error.dependency : 'postgres';
    outages.refused(dependency, error instanceof DependencyUnavailable ? error.cause : error, log);
    return serviceUnavailable(dependency);
  }
  const framework = fromFastifyError(error as FastifyError);
  if (framework) return framework;
  if (isPostgresConcurrencyFailure(error)) {
    // For example the same Idempotency-Key sent at once to POST /payments and to a route that claims
    // it first, on one mandate: each waits for what the other holds.
    log.warn({ err: error, sqlState: error.code }, 'a concurrent request took the same rows; answered 409, retry is safe');
    return problemOfDomainError(
      new ConflictError('concurrent-request', 'Another request changed the same data at the same moment; nothing was done, retry shortly', {
        retryAfterSeconds: 1,
      }),
    );
  }
  if (isPostgresDataException(error)) {
    log.warn({ err: error, sqlState: error.code }, 'PostgreSQL refused a value the request validation let through');
    return new HttpProblem(422, 'invalid-value', 'A value in the request is out of range or malformed');
  }
  const statusCode = (error as FastifyError).statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new HttpProblem(statusCode, 'bad-request', error.message);
  }
  log.error({ err: error }, 'unhandled error');
  return new HttpProblem(500, 'internal-error', 'An unexpected error occurred; it has been logged');
}

function sendProblem(reply: FastifyReply, problem: HttpProblem, instance: string): FastifyReply {
  const response = serializeProblem(problem, instance);
  // Refused before its body was read (no credentials, rate-limited): keeping the connection would
  // mean receiving and discarding the rest of that body first, which is what refusing it early
  // avoids. Closing also tells the client to stop sending.
  if (reply.request.raw.complete === false) reply.header('connection', 'close');
  return reply.code(response.status).headers(response.headers).send(response.body);
}

/**
 * The one error handler: every failure leaves as RFC 9457 problem+json, never a stack or SQL.
 * `outages` hears of every request refused for an outage (default: rate-limited warnings).
 */
export const errorsPlugin = fp(
  async (app: FastifyInstance, options: { outages?: OutageReporter }) => {
    const outages = options.outages ?? outageReporter();
    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (reply.sent || reply.raw.headersSent) {
        // A streamed body failed after its status went out: the response can only be cut short
        // (Fastify destroys it); answering again would fail with ERR_HTTP_HEADERS_SENT.
        request.log.warn({ err: error }, 'response failed after its headers were sent; the body is cut short');
        return;
      }
      sendProblem(reply, problemFor(error, request.log, outages), request.url);
    });

    const noRoute = (request: FastifyRequest) => new HttpProblem(404, 'not-found', `No route for ${request.method} ${request.url.split('?')[0]}`);
    // Answered before any body is read: nothing would use it, and a large one would only cost.
    app.addHook('onRequest', async (request) => {
      if (request.is404) throw noRoute(request);
    });
    app.setNotFoundHandler((request, reply) => {
      sendProblem(reply, noRoute(request), request.url);
    });
  },
  { name: 'errors' },
);

/**
 * Fastify's `frameworkErrors`: a URL the router cannot decode (400) or a path parameter over its
 * length limit (414) never reaches a route or the error handler.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // Refused before any hook ran (a malformed URL, no route): the version header is set here instead.
  reply.header(API_VERSION_HEADER, API_VERSION);
  sendProblem(reply, problemFor(error, request.log), request.url);
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser rejects (a request line or headers
 * over the header limit, a malformed Content-Length, not HTTP at all) get a problem too, written
 * straight to the socket because there is no request to reply to.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const problem =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new HttpProblem(431, 'headers-too-large', 'The request line and headers are larger than this service accepts')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HttpProblem(408, 'request-timeout', 'The request did not arrive in time')
        : new HttpProblem(400, 'bad-request', 'The request is not valid HTTP/1.1');
  this.log.debug({ code: error.code }, 'client error');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(problem.toBody());
  socket.end(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
      `Content-Type: application/problem+json; charset=utf-8\r\n${API_VERSION_HEADER}: ${API_VERSION}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
