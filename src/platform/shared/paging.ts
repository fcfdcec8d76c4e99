import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { MalformedRequestError } from './domain-errors.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** Cursor paging query: `limit`, and at most one of `after` / `before` (opaque cursors). */
export const pagingQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  after: z.string().min(1).optional(),
  before: z.string().min(1).optional(),
});

export type PagingQuery = z.infer<typeof pagingQuerySchema>;

export const pagingResponseSchema = z.object({ limit: z.number().int(), after: z.string().nullable(), before: z.string().nullable() }).meta({
  id: 'PagingResponse',
  description:
    'Where this page sits: pass `after` as the `after` query parameter for the next page, `before` as `before` for the ' +
    'previous one; null when there is none. Cursors are opaque and signed.',
  example: {
    limit: 50,
    after: 'WyIyMDI2LTExLTAyVDA5OjE1OjI3LjQxMloiLCIwMTkzYTRmMy03YzFkLTdlNjYtOWUzNS03ZjlhMWIzYzRkMDYiXQ.hrtXjFXLnYMJh7Alya5EIg',
    before: null,
  },
});

export interface Cursor {
  createdAt: string;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** 128 bits of HMAC-SHA256: forging one is out of reach, and cursors stay short. */
const TAG_BYTES = 16;

/**
 * Cursors are signed (HMAC) so that only a cursor this API issued is followed: a made-up one can
 * neither reach the database with an id that is no UUID, nor ask whether another tenant's row
 * exists (the keyset comparison reads the cursor row's instant). The first key signs; every key
 * verifies, so cursors survive a signing-key rotation. buildApp sets the keys (derived from the
 * token signing key, which every API process shares); this random key only serves code that pages
 * without an app.
 */
let cursorKeys: readonly Buffer[] = [randomBytes(32)];

export function useCursorKeys(keys: readonly Buffer[]): void {
  if (keys.length === 0) throw new Error('at least one cursor key is needed');
  cursorKeys = keys;
}

function cursorTag(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest().subarray(0, TAG_BYTES);
}

export function encodeCursor(row: { created_at: Date; id: string }): string {
  const payload = Buffer.from(JSON.stringify([row.created_at.toISOString(), row.id])).toString('base64url');
  return `${payload}.${cursorTag(cursorKeys[0]!, payload).toString('base64url')}`;
}

function verifiedPayload(cursor: string): string | undefined {
  const [payload, tagText, ...rest] = cursor.split('.');
  if (!payload || !tagText || rest.length > 0) return undefined;
  const tag = Buffer.from(tagText, 'base64url');
  if (tag.length !== TAG_BYTES) return undefined;
  return cursorKeys.some((key) => timingSafeEqual(cursorTag(key, payload), tag)) ? payload : undefined;
}

export function decodeCursor(cursor: string, parameter: 'after' | 'before'): Cursor {
  const payload = verifiedPayload(cursor);
  try {
    const [createdAt, id] = payload ? (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [unknown, unknown]) : [];
    if (typeof createdAt === 'string' && typeof id === 'string' && UUID.test(id) && !Number.isNaN(Date.parse(createdAt))) {
      return { createdAt, id };
    }
  } catch {
    // fall through to the problem below
  }
  throw new MalformedRequestError('invalid-cursor', `The ${parameter} cursor is not one this API issued`, {
    errors: [{ pointer: `/query/${parameter}`, detail: 'is not a valid cursor (use the after or before value of a page, unchanged)' }],
  });
}

/** Trims the probe row and builds the PagingResponse; rows come back newest first either way. */
export function pageOf<T extends { created_at: Date; id: string }>(rows: T[], paging: PagingQuery) {
  const hasMore = rows.length > paging.limit;
  const page = rows.slice(0, paging.limit);
  if (paging.before) page.reverse();
  const first = page[0];
  const last = page[page.length - 1];
  const olderExists = paging.before ? true : hasMore;
  const newerExists = paging.before ? hasMore : Boolean(paging.after);
  return {
    items: page,
    paging: {
      limit: paging.limit,
      after: olderExists && last ? encodeCursor(last) : null,
      before: newerExists && first ? encodeCursor(first) : null,
    },
  };
}

/** The paging of the list examples of /openapi.json. */
export const pagingExample = pagingResponseSchema.meta()!.example;
