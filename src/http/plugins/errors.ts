import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { HttpProblem, serializeProblem } from '../problem.ts';

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
    default:
      return undefined;
  }
}

/** The one error handler: every failure leaves as RFC 9457 problem+json, never a stack or SQL. */
export const errorsPlugin = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      let problem = error instanceof HttpProblem ? error : fromFastifyError(error);
      if (!problem && typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        problem = new HttpProblem(error.statusCode, 'bad-request', error.message);
      }
      if (!problem) {
        request.log.error({ err: error }, 'unhandled error');
        problem = new HttpProblem(500, 'internal-error', 'An unexpected error occurred; it has been logged');
      }
      const response = serializeProblem(problem, request.url);
      reply.code(response.status).headers(response.headers).send(response.body);
    });

    app.setNotFoundHandler((request, reply) => {
      const response = serializeProblem(
        new HttpProblem(404, 'not-found', `No route for ${request.method} ${request.url.split('?')[0]}`),
        request.url,
      );
      reply.code(404).headers(response.headers).send(response.body);
    });
  },
  { name: 'errors' },
);
