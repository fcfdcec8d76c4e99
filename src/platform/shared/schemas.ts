import { z } from 'zod';
import { currencyCodeSchema } from '../money/currency.ts';

export const uuidSchema = z.uuid({ message: 'must be a UUID' });

/**
 * A calendar date, YYYY-MM-DD, that really exists (no 2026-02-30). Year 0000 matches the pattern
 * but is no year PostgreSQL knows (1 BC precedes AD 1), so it is refused here, not by the database.
 */
export const isoDateSchema = z.iso
  .date({ message: 'must be a date as YYYY-MM-DD' })
  .refine((date) => !date.startsWith('0000-'), { message: 'must be a date as YYYY-MM-DD from year 0001' });

export const currencySchema = currencyCodeSchema;

/** Integer minor units (pence for GBP); never a fraction. */
export const minorUnitsSchema = z.number().int({ message: 'must be an integer in minor units' }).positive().max(999_999_999_999_999);

export const METADATA_MAX_ITEMS = 3;
export const METADATA_MAX_ITEM_BYTES = 1024 * 1024;

/**
 * Free-form biller metadata: at most 3 items, each at most 1 MB once serialized. Items are the
 * object's keys; the limit error points at the offending field.
 */
type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * Any JSON value a metadata item may hold: z.json() spelt out, so that the recursion carries the
 * name (z.json()'s own is anonymous, and /openapi.json would show it as such).
 */
const jsonValueSchema: z.ZodType<JsonValue> = z
  .lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]))
  .meta({
    id: 'JsonValue',
    description: 'Any JSON value: a string, number, boolean, null, array or object.',
    example: 'INV-2026-0042',
  });

export const metadataSchema = z
  .record(z.string().min(1).max(100), jsonValueSchema)
  .superRefine((metadata, ctx) => {
    const keys = Object.keys(metadata);
    if (keys.length > METADATA_MAX_ITEMS) {
      ctx.addIssue({
        code: 'custom',
        message: `metadata has ${keys.length} items; at most ${METADATA_MAX_ITEMS} are allowed`,
      });
    }
    for (const key of keys) {
      const bytes = Buffer.byteLength(JSON.stringify(metadata[key]), 'utf8');
      if (bytes > METADATA_MAX_ITEM_BYTES) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `metadata item ${key} is ${bytes} bytes; each item may be at most ${METADATA_MAX_ITEM_BYTES} bytes (1 MB)`,
        });
      }
    }
  })
  .meta({
    id: 'Metadata',
    description: `Free-form data of the biller's, returned as given: at most ${METADATA_MAX_ITEMS} items, each at most 1 MB as JSON.`,
    example: { invoice: 'INV-2026-0042' },
  });

export type Metadata = z.infer<typeof metadataSchema>;

export const idParams = <K extends string>(name: K) => z.strictObject({ [name]: uuidSchema } as { [P in K]: typeof uuidSchema });

/** Dates leave as 'YYYY-MM-DD', instants as ISO 8601 UTC. */
export function isoInstant(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not a UUID names nothing: callers answer 404 rather than a validation error. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** `true`/`false`, `1`/`0`, or the bare flag (`?dry_run`), as query strings write booleans. */
export const queryFlagSchema = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((value) => value === 'true' || value === '1' || value === '');
