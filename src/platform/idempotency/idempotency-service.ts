import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../db/connection.ts';
import type { DB } from '../db/tables.ts';
import {
  claimKey,
  completeKey,
  deleteClaim,
  deleteExpiredKeys,
  findKey,
  insertCompletedKey,
  isKeyTaken,
  storeResponseAlongside,
  type KeyRef,
  type StoredKey,
} from './idempotency-repository.ts';
import type { WriteAlongside } from '../db/write-alongside.ts';
import { ConflictError, InvalidError } from '../shared/domain-errors.ts';
import { redactUrlCredentials } from '../shared/logger.ts';
import { isUuid } from '../shared/schemas.ts';

/** Response headers worth replaying; the rest (dates, rate limits) describe the new request. */
const REPLAYED_HEADERS = ['content-type', 'location', 'cache-control'];

export interface IdempotencyOptions {
  db: Database;
  retentionDays: number;
}

/** A response as it was sent, and as it is stored for replay. */
export interface SerializedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface EffectResponse extends SerializedResponse {
  /** Runs once the effect's transaction has committed, never on a replay; not stored. */
  afterCommit?: () => Promise<void>;
}

export interface EffectAnswer {
  response: EffectResponse;
  /** The stored response of an earlier request with this key: the effect did not run again. */
  replayed: boolean;
}

/** One mutation of one client, as the idempotency key and the fingerprint see it. */
export interface IdempotentCall {
  clientId: string;
  /** A key as parseIdempotencyKey gives it; without one the effect simply runs. */
  key: string | undefined;
  method: string;
  url: string;
  rawBody: string | undefined;
}

/**
 * The response a refusal thrown by the effect stands for, so that it is stored and replayed like
 * any other outcome; undefined for a failure that a retry might not meet (an outage, a bug), which
 * is thrown on, not stored.
 */
export type RefusalResponse = (error: unknown) => SerializedResponse | undefined;

/** Accepts `Idempotency-Key: <uuid>` or the quoted form of the IETF draft (`"<uuid>"`). */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined | null {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw.trim() === '') return undefined;
  const bare = raw.trim().replace(/^"(.*)"$/, '$1');
  return isUuid(bare) ? bare.toLowerCase() : null;
}

export function requestFingerprint(method: string, url: string, rawBody: string | undefined): string {
  const bodyHash = createHash('sha256')
    .update(rawBody ?? '')
    .digest('hex');
  return createHash('sha256').update(`${method} ${url}\n${bodyHash}`).digest('hex');
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

function inFlight(): ConflictError {
  return new ConflictError('idempotency-key-in-flight', 'A request with this Idempotency-Key is still being processed; retry shortly', {
    retryAfterSeconds: 1,
  });
}

/** Answers a request whose key is already taken: replay, or say why not. */
function answerFromStored(stored: StoredKey | undefined, fingerprint: string): EffectAnswer {
  if (stored && stored.fingerprint !== fingerprint) {
    throw new InvalidError('idempotency-key-reused', 'This Idempotency-Key was already used for a different request');
  }
  // Committed rows are completed: claims commit only together with their response. An in_flight
  // one could only be left by the earlier two-commit design; it expires with the retention.
  if (stored?.status !== 'completed') throw inFlight();
  return {
    response: { status: stored.response_status!, headers: stored.response_headers as Record<string, string>, body: stored.response_body!.toString('utf8') },
    replayed: true,
  };
}

/**
 * Given to an effect that stores its own response (runOnce's `responseInWrite`): it hands the
 * response it is about to answer to `store` before its write and puts what comes back into that
 * write's statement (a WriteAlongside). The key then costs no statement of its own: no claim before
 * the effect, no completion after it. The effect must answer exactly the response it stored (checked),
 * and must run the statement it put it in (not checked: a host that skips its write stores nothing).
 */
export interface ResponseInWrite {
  store(response: SerializedResponse): WriteAlongside;
}

/** The key was stored by another request while this one ran: this one's effect rolls back. */
class KeyTakenMeanwhile extends Error {}

type Attempt = { ran: true; response: EffectResponse } | { ran: false; stored: StoredKey | undefined };

/**
 * Runs a mutation's effect exactly once per (client, key), with one transaction and one commit:
 * the key is claimed by the transaction's first statement (see claimKey), the effect runs, and the
 * response is stored before the commit, so the effect and its stored response commit or vanish
 * together. A duplicate that arrives meanwhile is refused at once (in flight), one that arrives
 * later gets the stored response. Refusals are stored too (the same request would be refused the
 * same way), 5xx responses and failures are not, so the caller can retry. With `responseInWrite`
 * the effect's own write stores the response instead (see runWithResponseInWrite): two statements
 * fewer for the API's busiest write.
 */
export function createIdempotentEffects(options: IdempotencyOptions) {
  const { db } = options;

  /**
   * The response stored by the effect's own write (see ResponseInWrite), for an effect cheap enough
   * that a duplicate may run it up to that write: the write fails on the key's primary key and rolls
   * back, and the duplicate is answered from what the first stored. A duplicate of a request still
   * running waits for it (the effect's row locks or the key's uncommitted row) instead of a 409.
   * An effect that answers without storing has its response stored after it, as a refusal is.
   */
  async function runWithResponseInWrite(
    ref: KeyRef,
    fingerprint: string,
    expiresAt: Date,
    effect: (trx: Transaction<DB>, inWrite: ResponseInWrite) => Promise<EffectResponse>,
  ): Promise<EffectAnswer> {
    const response = await db.transaction().execute(async (trx) => {
      let stored: SerializedResponse | undefined;
      const inWrite: ResponseInWrite = {
        store(response) {
          if (response.status >= 500) throw new Error('a 5xx response is never stored: the caller may retry');
          stored = response;
          return storeResponseAlongside(ref, fingerprint, expiresAt, storable(response));
        },
      };
      const response = await effect(trx, inWrite);
      if (stored === undefined) {
        if (response.status < 500 && !(await insertCompletedKey(trx, ref, fingerprint, expiresAt, storable(response)))) {
          throw new KeyTakenMeanwhile();
        }
      } else if (stored.status !== response.status || stored.body !== response.body) {
        throw new Error('the effect answered a different response from the one it stored');
      }
      return response;
    });
    return { response, replayed: false };
  }

  return async function runOnce(
    call: IdempotentCall,
    effect: (trx: Transaction<DB>, inWrite: ResponseInWrite | undefined) => Promise<EffectResponse>,
    refusalResponse: RefusalResponse,
    mode: { responseInWrite?: boolean } = {},
  ): Promise<EffectAnswer> {
    const { key } = call;
    if (key === undefined) return { response: await db.transaction().execute((trx) => effect(trx, undefined)), replayed: false };

    const ref: KeyRef = { clientId: call.clientId, key };
    const fingerprint = requestFingerprint(call.method, call.url, call.rawBody);
    const expiresAt = new Date(Date.now() + options.retentionDays * 86_400_000);

    let attempt: Attempt;
    try {
      if (mode.responseInWrite) return await runWithResponseInWrite(ref, fingerprint, expiresAt, effect);
      attempt = await db.transaction().execute(async (trx): Promise<Attempt> => {
        const claim = await claimKey(trx, ref, fingerprint, expiresAt);
        if (!claim.claimed) {
          // Locked but not claimed: a row committed after this statement's snapshot; read it now.
          const stored = claim.existing ?? (claim.locked ? await findKey(trx, ref) : undefined);
          return { ran: false, stored };
        }
        const response = await effect(trx, undefined);
        if (response.status < 500) await completeKey(trx, ref, storable(response));
        else await deleteClaim(trx, ref);
        return { ran: true, response };
      });
    } catch (error) {
      if (error instanceof KeyTakenMeanwhile || isKeyTaken(error)) return answerFromStored(await findKey(db, ref), fingerprint);
      const refusal = refusalResponse(error);
      if (!refusal) throw error;
      // The rollback took the claim (or the stored response) with it; store the 4xx on its own,
      // unless a duplicate that ran meanwhile stored its outcome first: then that one is the answer.
      if (await insertCompletedKey(db, ref, fingerprint, expiresAt, storable(refusal))) return { response: refusal, replayed: false };
      return answerFromStored(await findKey(db, ref), fingerprint);
    }
    if (!attempt.ran) return answerFromStored(attempt.stored, fingerprint);
    return { response: attempt.response, replayed: false };
  };
}

/**
 * Questions asked over POST (availability checks): they change nothing but their own log, so a retry
 * with the same key is answered with the first answer rather than asked again (nor counted again
 * against the caller's limits). No claim is held while the question is asked: two duplicates at once
 * may both ask, and the first answer stored answers both, since asking twice changes nothing twice.
 * Only a success is kept, and only for `retentionHours` (an answer may name a person's employer and
 * salary); a refusal or failure is asked again on a retry.
 */
export function createIdempotentQuestions(options: Pick<IdempotencyOptions, 'db'>) {
  const { db } = options;
  return async function answerOnce(call: IdempotentCall, retentionHours: number, ask: () => Promise<SerializedResponse>): Promise<EffectAnswer> {
    if (call.key === undefined) return { response: await ask(), replayed: false };
    const ref: KeyRef = { clientId: call.clientId, key: call.key };
    const fingerprint = requestFingerprint(call.method, call.url, call.rawBody);
    const stored = await findKey(db, ref);
    if (stored) return answerFromStored(stored, fingerprint);
    const response = await ask();
    if (response.status < 200 || response.status >= 300) return { response, replayed: false };
    const expiresAt = new Date(Date.now() + retentionHours * 3_600_000);
    if (await insertCompletedKey(db, ref, fingerprint, expiresAt, storable(response))) return { response, replayed: false };
    return answerFromStored(await findKey(db, ref), fingerprint);
  };
}

export async function purgeExpiredIdempotencyKeys(db: Database, now = new Date()): Promise<number> {
  return deleteExpiredKeys(db, now);
}
