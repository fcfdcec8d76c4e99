import { sql, type RawBuilder } from 'kysely';
import { z } from 'zod';
import type { Executor } from '../../platform/db/connection.ts';
import { fixedSql } from '../../platform/db/fixed-sql.ts';
import { timeOrderedUuidSql } from '../../platform/db/time-ordered-uuid-sql.ts';
import { paymentResponseSchema } from './payment-resource.ts';

// payment_request.updated events written by the statement that changes the payments. Reconciliation
// and payouts move up to a million payments in one run; returning every row to Node only to build its
// event and send it back costs more than the update itself, and holding a payout's rows at once would
// not fit in memory. So the event is built in SQL, next to the rows.

/** toISOString in SQL: UTC, milliseconds (truncated, as node-pg's Date is), 'Z'. */
const isoInstant = (value: RawBuilder<unknown>) => sql`to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** An instant field of the schema: written with isoInstant, as toPaymentResource writes it. */
function isInstantField(field: z.ZodType): boolean {
  const inner = field instanceof z.ZodNullable ? field.unwrap() : field;
  return inner instanceof z.ZodISODateTime;
}

/**
 * What an update of a payment request can change. A payment event written in SQL stores these, as
 * `payment_<field>`; every other field was set when the request was made and never changes (a trigger
 * refuses it, migration 20261129000000), so it is rendered from the request itself.
 */
const CHANGING_PAYMENT_FIELDS: ReadonlySet<string> = new Set([
  'status',
  'status_reason',
  'collected_amount',
  'paid_out_amount',
  'attempts',
  'target_pay_date',
  'version',
  'updated_at',
  'cancelled_at',
] satisfies ReadonlyArray<keyof z.infer<typeof paymentResponseSchema>>);

/**
 * toPaymentResource (payment-resource.ts) as a jsonb expression, each field read by `columnOf`. Its keys
 * are the fields of paymentResponseSchema, instants formatted as toISOString formats them; every other
 * value (uuids, text, numbers, dates, booleans, the metadata jsonb) is already what the API shows. A
 * field added to the schema is in these events without a change here (toPaymentResource fails to
 * compile until it has it too), and the payment event tests hold the two to each other value by value.
 */
function paymentResourceJsonbOf(columnOf: (field: string) => RawBuilder<unknown>): RawBuilder<unknown> {
  const fields = Object.entries(paymentResponseSchema.shape).map(([name, field]) => {
    const column = columnOf(name);
    return sql`${sql.lit(name)}, ${isInstantField(field) ? isoInstant(column) : column}`;
  });
  return sql`jsonb_build_object(${sql.join(fields)})`;
}

/**
 * An `insert into events` of one payment event per row of `source` (a CTE or table name whose rows
 * have the payment_requests columns), stored narrow: the event id (time-ordered), type, created_at and
 * what an update can change (CHANGING_PAYMENT_FIELDS), no payload. A created event is as old as the
 * request it announces; an updated one is the transaction's now(). eventPayloadSql renders the payload
 * buildEvent (events/outbox.ts) would have stored. For a WITH clause of the statement that writes the
 * payments.
 */
export function insertPaymentEventsSql(type: 'payment_request.created' | 'payment_request.updated', source: string): RawBuilder<unknown> {
  return fixedSql(`payment events ${type} from ${source}`, () => {
    const changing = [...CHANGING_PAYMENT_FIELDS];
    const createdAt = type === 'payment_request.created' ? sql`e.created_at` : sql`now()`;
    return sql`
      insert into events (id, type, biller_client_id, resource_type, resource_id, created_at, ${sql.join(changing.map((field) => sql.ref(`payment_${field}`)))})
      select e.event_id, ${sql.lit(type)}, e.biller_client_id, 'payment_request', e.id, ${createdAt}, ${sql.join(changing.map((field) => sql.ref(`e.${field}`)))}
      from (select ${timeOrderedUuidSql} as event_id, p.* from ${sql.table(source)} p) e
    `;
  });
}

/** payment_request.updated of each row of `source`, for the statement that updates the payments. */
export const insertPaymentUpdatedEvents = (source: string) => insertPaymentEventsSql('payment_request.updated', source);

/**
 * An event's webhook payload, as a jsonb expression over a row of `alias` (the events columns): the
 * stored payload, or for an event stored narrow the envelope buildEvent writes (id, type, created_at)
 * around the payment as the event's columns say it was, the fields that never change read from the
 * payment request. Every reader of payloads (the events API, webhook deliveries) goes through this.
 */
export function eventPayloadSql(alias: string): RawBuilder<unknown> {
  return fixedSql(`event payload of ${alias}`, () => {
    const event = (column: string) => sql.ref(`${alias}.${column}`);
    const data = paymentResourceJsonbOf((field) => (CHANGING_PAYMENT_FIELDS.has(field) ? event(`payment_${field}`) : sql.ref(`rendered_payment.${field}`)));
    return sql`coalesce(${event('payload')}, (
      select jsonb_build_object('id', ${event('id')}, 'type', ${event('type')}, 'created_at', ${isoInstant(event('created_at'))}, 'data', ${data})
      from payment_requests rendered_payment where rendered_payment.id = ${event('resource_id')}))`;
  });
}

/** payment_request.updated for the payments as they are now, in one statement; returns how many. */
export async function recordPaymentUpdatedEvents(db: Executor, paymentIds: readonly string[]): Promise<number> {
  if (paymentIds.length === 0) return 0;
  const result = await sql<{ events: number }>`
    with payments as (select * from payment_requests where id = any(${[...paymentIds]}::uuid[])),
    written as (${insertPaymentUpdatedEvents('payments')} returning 1)
    select count(*)::int as events from written
  `.execute(db);
  return result.rows[0]!.events;
}
