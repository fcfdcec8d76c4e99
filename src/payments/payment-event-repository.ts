import { sql, type RawBuilder } from 'kysely';
import { z } from 'zod';
import type { Executor } from '../db/connection.ts';
import { timeOrderedUuidSql } from '../db/time-ordered-uuid-sql.ts';
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
 * toPaymentResource (payment-resource.ts) as a jsonb expression over a row of `alias`, which has the
 * payment_requests columns. Its keys are the fields of paymentResponseSchema, each read from the column
 * of the same name, instants formatted as toISOString formats them; every other value (uuids, text,
 * numbers, dates, booleans, the metadata jsonb) is already what the API shows. A field added to the
 * schema is in these events without a change here (toPaymentResource fails to compile until it has it
 * too), and the payment event tests hold the two to each other value by value.
 */
export function paymentResourceJsonb(alias: string): RawBuilder<unknown> {
  const fields = Object.entries(paymentResponseSchema.shape).map(([name, field]) => {
    const column = sql.ref(`${alias}.${name}`);
    return sql`${sql.lit(name)}, ${isInstantField(field) ? isoInstant(column) : column}`;
  });
  return sql`jsonb_build_object(${sql.join(fields)})`;
}

/**
 * An `insert into events` of one payment_request.updated event per row of `source` (a CTE or table
 * name whose rows have the payment_requests columns), with the envelope buildEvent (events/outbox.ts)
 * writes: the event id, type, created_at (the transaction's now(), also the row's created_at) and the
 * resource as data. For a WITH clause of the statement that updates the payments.
 */
export function insertPaymentUpdatedEvents(source: string): RawBuilder<unknown> {
  return sql`
    insert into events (id, type, biller_client_id, resource_type, resource_id, payload, created_at)
    select e.event_id, 'payment_request.updated', e.biller_client_id, 'payment_request', e.id,
           jsonb_build_object('id', e.event_id, 'type', 'payment_request.updated', 'created_at', stamp.created_at,
                              'data', ${paymentResourceJsonb('e')}),
           now()
    from (select ${timeOrderedUuidSql(sql`r.random`)} as event_id, r.*
          from (select uuid_send(gen_random_uuid()) as random, p.* from ${sql.table(source)} p) r) e
    -- The transaction's now(), formatted once rather than per event.
    cross join (select ${isoInstant(sql`now()`)} as created_at) stamp
  `;
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
