import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Database } from '../db/connection.ts';
import { HttpProblem, serializeProblem, type SerializedResponse } from '../http/problem.ts';
import type { EffectRoute, HttpResult, RouteContext } from '../http/route.ts';
import {
  claimKey,
  completeKey,
  deleteClaim,
  deleteExpiredKeys,
  findKey,
  insertCompletedKey,
  type KeyRef,
  type StoredKey,
} from './idempotency-repository.ts';
import { redactUrlCredentials } from '../shared/logger.ts';
import { isUuid } from '../shared/schemas.ts';

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

/**
 * Response fields that hold a credential shown once (a webhook endpoint's signing secret, a client's
 * rotated secret or API key). Stored responses live for IDEMPOTENCY_RETENTION_DAYS, so these are
 * stored masked: a replay repeats the outcome, not the secret. Whoever lost it rotates again.
 */
const CREDENTIAL_FIELDS = new Set(['secret', 'client_secret', 'api_key', 'access_token']);
const MIGHT_HOLD_CREDENTIALS = /"(?:secret|client_secret|api_key|access_token)"\s*:|"instance"\s*:\s*"[^"]*\?/;

/** `whsec_Zm9v...` -> `whsec_********`: the kind of credential stays recognisable, nothing of its value. */
export function maskCredential(value: string): string {
  return `${/^[a-z]+_/.exec(value)?.[0] ?? ''}********`;
}

function maskValue(value: unknown, key: string | undefined): unknown {
  if (typeof value === 'string') {
    if (key !== undefined && CREDENTIAL_FIELDS.has(key)) return maskCredential(value);
    // A problem's instance is the request URL, which a careless client may have put a credential in.
    return key === 'instance' ? redactUrlCredentials(value) : value;
  }
  if (Array.isArray(value)) return value.map((item) => maskValue(item, undefined));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, maskValue(item, name)]));
  }
  return value;
}

/** The response body as stored for replay: credentials masked, anything else byte for byte. */
export function replayableBody(body: string): string {
  if (!MIGHT_HOLD_CREDENTIALS.test(body)) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  return JSON.stringify(maskValue(parsed, undefined));
}

function storable(response: SerializedResponse) {
  const headers = Object.fromEntries(Object.entries(response.headers).filter(([name]) => REPLAYED_HEADERS.includes(name)));
  return { status: response.status, headers, body: Buffer.from(replayableBody(response.body), 'utf8') };
}

function inFlight(): HttpProblem {
  return new HttpProblem(409, 'idempotency-key-in-flight', 'A request with this Idempotency-Key is still being processed; retry shortly', {
    headers: { 'retry-after': '1' },
  });
}

/** Answers a request whose key is already taken: replay, or say why not. */
function answerFromStored(reply: FastifyReply, stored: StoredKey | undefined, fingerprint: string): FastifyReply {
  if (stored && stored.fingerprint !== fingerprint) {
    throw new HttpProblem(422, 'idempotency-key-reused', 'This Idempotency-Key was already used for a different request');
  }
  // Committed rows are completed: claims commit only together with their response. An in_flight
  // one could only be left by the earlier two-commit design; it expires with the retention.
  if (stored?.status !== 'completed') throw inFlight();
  return send(
    reply,
    { status: stored.response_status!, headers: stored.response_headers as Record<string, string>, body: stored.response_body!.toString('utf8') },
    true,
  );
}

type Attempt =
  | { ran: true; response: SerializedResponse & { afterCommit?: () => Promise<void> } }
  | { ran: false; stored: StoredKey | undefined };

/**
 * Runs a mutation's effect exactly once per (client, key), with one transaction and one commit:
 * the key is claimed by the transaction's first statement (see claimKey), the effect runs, and the
 * response is stored before the commit, so the effect and its stored response commit or vanish
 * together. A duplicate that arrives meanwhile gets 409 at once, one that arrives later the
 * stored response. 4xx outcomes are stored too (the same request would fail the same way), 5xx
 * are not, so the caller can retry.
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

    let attempt: Attempt;
    try {
      attempt = await db.transaction().execute(async (trx): Promise<Attempt> => {
        const claim = await claimKey(trx, ref, fingerprint, expiresAt);
        if (!claim.claimed) {
          // Locked but not claimed: a row committed after this statement's snapshot; read it now.
          const stored = claim.existing ?? (claim.locked ? await findKey(trx, ref) : undefined);
          return { ran: false, stored };
        }
        const response = serializeResult(await spec.effect(ctx, trx));
        if (response.status < 500) await completeKey(trx, ref, storable(response));
        else await deleteClaim(trx, ref);
        return { ran: true, response };
      });
    } catch (error) {
      if (!(error instanceof HttpProblem) || error.status >= 500) throw error;
      // The rollback took the claim with it; store the 4xx on its own, unless a duplicate that
      // ran meanwhile stored its outcome first: then that one is the answer, for both.
      const problem = serializeProblem(error, request.url);
      if (await insertCompletedKey(db, ref, fingerprint, expiresAt, storable(problem))) return send(reply, problem, false);
      return answerFromStored(reply, await findKey(db, ref), fingerprint);
    }
    if (!attempt.ran) return answerFromStored(reply, attempt.stored, fingerprint);
    await afterCommit(ctx, attempt.response);
    return send(reply, attempt.response, false);
  };
}

export async function purgeExpiredIdempotencyKeys(db: Database, now = new Date()): Promise<number> {
  return deleteExpiredKeys(db, now);
}
