import type { FastifyReply } from 'fastify';
import {
  createIdempotentEffects,
  createIdempotentQuestions,
  parseIdempotencyKey,
  type EffectResponse,
  type IdempotencyOptions,
  type SerializedResponse,
} from '../../platform/idempotency/idempotency-service.ts';
import { countIdempotencyReplay } from '../../platform/metrics/service-metrics.ts';
import { contentDigestSha256 } from './content-digest.ts';
import { knownProblem } from './plugins/errors.ts';
import { HttpProblem, serializeProblem } from './problem.ts';
import type { EffectRunner, HttpResult, QuestionRunner, RouteContext } from './route.ts';

function send(reply: FastifyReply, response: SerializedResponse, replayed: boolean): FastifyReply {
  reply.code(response.status);
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply.send(response.body);
}

function serializeResult(result: HttpResult): EffectResponse {
  return {
    ...(result.afterCommit ? { afterCommit: result.afterCommit } : {}),
    status: result.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...(result.headers ?? {}) },
    body: result.body === undefined ? '' : JSON.stringify(result.body),
  };
}

function idempotencyKeyOf(ctx: RouteContext<any, any, any>): string | undefined {
  const key = parseIdempotencyKey(ctx.request.headers['idempotency-key']);
  if (key === null) {
    throw new HttpProblem(400, 'invalid-idempotency-key', 'Idempotency-Key must be a UUID', {
      errors: [{ pointer: '/headers/idempotency-key', detail: 'must be a UUID' }],
    });
  }
  return key;
}

/** Questions over HTTP (see createIdempotentQuestions): a retry with the key replays the first answer. */
export function createQuestionRunner(options: Pick<IdempotencyOptions, 'db'>): QuestionRunner {
  const answerOnce = createIdempotentQuestions(options);
  return async function runQuestion(ctx, spec) {
    const { request, reply, caller } = ctx;
    const key = idempotencyKeyOf(ctx);
    const answer = await answerOnce(
      { clientId: caller.clientId, key, method: request.method, url: request.url, rawBody: request.rawBody },
      spec.replayRetentionHours,
      async () => serializeResult(await spec.ask(ctx)),
    );
    if (answer.replayed) countIdempotencyReplay();
    return send(reply, answer.response, answer.replayed);
  };
}

/**
 * Mutations over HTTP: the Idempotency-Key header says which run of the effect a request is (see
 * createIdempotentEffects), and what a run answered, a 4xx problem included, is what a replay
 * answers.
 */
export function createEffectRunner(options: IdempotencyOptions): EffectRunner {
  const runOnce = createIdempotentEffects(options);

  async function afterCommit(ctx: RouteContext<any, any, any>, response: EffectResponse) {
    try {
      await response.afterCommit?.();
    } catch (error) {
      ctx.request.log.error({ err: error }, 'after-commit work failed; the nightly sweep will pick it up');
    }
  }

  return async function runEffect(ctx, spec) {
    const { request, reply, caller } = ctx;
    const key = idempotencyKeyOf(ctx);
    if (key === undefined && spec.idempotencyKey === 'required') {
      throw new HttpProblem(400, 'idempotency-key-required', `${request.method} ${spec.url} requires an Idempotency-Key header`, {
        errors: [{ pointer: '/headers/idempotency-key', detail: 'is required' }],
      });
    }

    // A streamed body is read by the effect itself, after the key is claimed: its fingerprint is the
    // digest the caller states (Content-Digest), which the effect then holds the body to.
    let fingerprintedBody = request.rawBody;
    if (spec.streamedBody && key !== undefined) {
      const digest = contentDigestSha256(request.headers['content-digest']);
      if (digest === undefined || digest === null) {
        throw new HttpProblem(400, 'content-digest-required', "An Idempotency-Key on a streamed body needs the body's Content-Digest (sha-256)", {
          errors: [
            {
              pointer: '/headers/content-digest',
              detail: digest === undefined ? 'is required with an Idempotency-Key' : 'must be sha-256=:<base64 of the SHA-256 of the body>:',
            },
          ],
        });
      }
      fingerprintedBody = `content-digest sha-256 ${digest}`;
    }

    const answer = await runOnce(
      { clientId: caller.clientId, key, method: request.method, url: request.url, rawBody: fingerprintedBody },
      async (trx, inWrite) => {
        const storeResponse = inWrite && ((result: HttpResult) => inWrite.store(serializeResult(result)));
        return serializeResult(await spec.effect(ctx, trx, storeResponse));
      },
      (error) => {
        const problem = knownProblem(error);
        return problem && problem.status < 500 ? serializeProblem(problem, request.url) : undefined;
      },
      { responseInWrite: spec.responseInWrite === true },
    );
    if (answer.replayed) countIdempotencyReplay();
    else await afterCommit(ctx, answer.response);
    return send(reply, answer.response, answer.replayed);
  };
}
