import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Database } from '../db/connection.ts';
import { HttpProblem, serializeProblem, type SerializedResponse } from '../http/problem.ts';
import type { EffectRoute, HttpResult, RouteContext } from '../http/route.ts';
import {
  completeKey,
  deleteClaim,
  deleteExpiredKeys,
  findKey,
  insertClaim,
  reclaimAbandoned,
  type KeyRef,
} from './idempotency-repository.ts';
import { isUuid } from '../shared/schemas.ts';

/** A claim older than this belongs to a request that died; its key may be used again. */
const ABANDONED_AFTER_MS = 5 * 60_000;
/** Response headers worth replaying; the rest (dates, rate limits) describe the new request. */
const REPLAYED_HEADERS = ['content-type', 'location'];

export interface IdempotencyOptions {
  db: Database;
  retentionDays: number;
}

/** Accepts `Idempotency-Key: <uuid>` or the quoted form of the IETF draft (`"<uuid>"`). */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined | null {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw.trim() === '') return undefined;
  const bare = raw.trim().replace(/^"(.*)"$/, '$1');
  return isUuid(bare) ? bare.toLowerCase() : null;
}

export function requestFingerprint(method: string, url: string, rawBody: string | undefined): string {
  const bodyHash = createHash('sha256').update(rawBody ?? '').digest('hex');
  return createHash('sha256').update(`${method} ${url}\n${bodyHash}`).digest('hex');
}

function send(reply: FastifyReply, response: SerializedResponse, replayed: boolean): FastifyReply {
  reply.code(response.status);
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply.send(response.body);
}

function serializeResult(result: HttpResult): SerializedResponse & { afterCommit?: () => Promise<void> } {
  return {
    ...(result.afterCommit ? { afterCommit: result.afterCommit } : {}),
    status: result.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...(result.headers ?? {}) },
    body: result.body === undefined ? '' : JSON.stringify(result.body),
  };
}

function storable(response: SerializedResponse) {
  const headers = Object.fromEntries(Object.entries(response.headers).filter(([name]) => REPLAYED_HEADERS.includes(name)));
  return { status: response.status, headers, body: Buffer.from(response.body, 'utf8') };
}

/**
 * Runs a mutation's effect exactly once per (client, key). The claim is committed first so a
 * concurrent duplicate sees it and gets 409; the final response is stored in the effect's own
 * transaction; 4xx outcomes are stored too (the same request would fail the same way), 5xx are
 * not, so the caller can retry.
 */
export function createEffectRunner(options: IdempotencyOptions) {
  const { db } = options;

  async function afterCommit(ctx: RouteContext<any, any, any>, response: { afterCommit?: () => Promise<void> }) {
    try {
      await response.afterCommit?.();
    } catch (error) {
      ctx.request.log.error({ err: error }, 'after-commit work failed; the nightly sweep will pick it up');
    }
  }

  async function runWithoutKey(ctx: RouteContext<any, any, any>, spec: EffectRoute<any, any, any>) {
    const response = await db.transaction().execute(async (trx) => serializeResult(await spec.effect(ctx, trx)));
    await afterCommit(ctx, response);
    return send(ctx.reply, response, false);
  }

  return async function runEffect(ctx: RouteContext<any, any, any>, spec: EffectRoute<any, any, any>): Promise<FastifyReply> {
    const { request, reply, caller } = ctx;
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    if (key === null) {
      throw new HttpProblem(400, 'invalid-idempotency-key', 'Idempotency-Key must be a UUID', {
        errors: [{ pointer: '/headers/idempotency-key', detail: 'must be a UUID' }],
      });
    }
    if (key === undefined) {
      if (spec.idempotencyKey === 'required') {
        throw new HttpProblem(400, 'idempotency-key-required', `${request.method} ${spec.url} requires an Idempotency-Key header`, {
          errors: [{ pointer: '/headers/idempotency-key', detail: 'is required' }],
        });
      }
      return runWithoutKey(ctx, spec);
    }

    const ref: KeyRef = { clientId: caller.clientId, key };
    const fingerprint = requestFingerprint(request.method, request.url, request.rawBody);
    const expiresAt = new Date(Date.now() + options.retentionDays * 86_400_000);

    if (!(await insertClaim(db, ref, fingerprint, expiresAt))) {
      const existing = await findKey(db, ref);
      if (existing && existing.fingerprint !== fingerprint) {
        throw new HttpProblem(422, 'idempotency-key-reused', 'This Idempotency-Key was already used for a different request');
      }
      if (existing?.status === 'completed') {
        return send(
          reply,
          {
            status: existing.response_status!,
            headers: existing.response_headers as Record<string, string>,
            body: existing.response_body!.toString('utf8'),
          },
          true,
        );
      }
      const staleBefore = new Date(Date.now() - ABANDONED_AFTER_MS);
      // The row vanished (its request failed with a 5xx) or was abandoned: claim it afresh.
      const claimed = existing
        ? await reclaimAbandoned(db, ref, staleBefore, expiresAt)
        : await insertClaim(db, ref, fingerprint, expiresAt);
      if (!claimed) {
        throw new HttpProblem(409, 'idempotency-key-in-flight', 'A request with this Idempotency-Key is still being processed; retry shortly', {
          headers: { 'retry-after': '1' },
        });
      }
    }

    let response: SerializedResponse & { afterCommit?: () => Promise<void> };
    try {
      response = await db.transaction().execute(async (trx) => {
        const result = serializeResult(await spec.effect(ctx, trx));
        if (result.status < 500) await completeKey(trx, ref, storable(result));
        return result;
      });
    } catch (error) {
      if (error instanceof HttpProblem && error.status < 500) {
        const problem = serializeProblem(error, request.url);
        await completeKey(db, ref, storable(problem));
        return send(reply, problem, false);
      }
      await deleteClaim(db, ref);
      throw error;
    }
    if (response.status >= 500) await deleteClaim(db, ref);
    await afterCommit(ctx, response);
    return send(reply, response, false);
  };
}

export async function purgeExpiredIdempotencyKeys(db: Database, now = new Date()): Promise<number> {
  return deleteExpiredKeys(db, now);
}
