import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/connection.ts';
import { timeOrderedUuidSql } from '../shared/time-ordered-uuid.ts';

// payment_request.updated events written by the statement that changes the payments. Reconciliation
// and payouts move up to a million payments in one run; returning every row to Node only to build its
// event and send it back costs more than the update itself, and holding a payout's rows at once would
// not fit in memory. So the event is built in SQL, next to the rows.

/** toISOString in SQL: UTC, milliseconds (truncated, as node-pg's Date is), 'Z'. */
const isoInstant = (value: RawBuilder<unknown>) => sql`to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * toPaymentResource (payment-resource.ts) as a jsonb expression over a row of `alias`, which has the
 * payment_requests columns: the same keys and value formats, so an event built here is the one
 * recordEvents would have written. The payment event tests hold the two to each other.
 */
export function paymentResourceJsonb(alias: string): RawBuilder<unknown> {
  const c = (column: string) => sql.ref(`${alias}.${column}`);
  return sql`jsonb_build_object(
    'id', ${c('id')}, 'mandate_id', ${c('mandate_id')}, 'schedule_id', ${c('schedule_id')},
    'instalment_number', ${c('instalment_number')}, 'status', ${c('status')}, 'status_reason', ${c('status_reason')},
    'amount', ${c('amount')},
    'currency', ${c('currency')}, 'collected_amount', ${c('collected_amount')}, 'paid_out_amount', ${c('paid_out_amount')},
    'attempts', ${c('attempts')}, 'due_date', ${c('due_date')}, 'target_pay_date', ${c('target_pay_date')},
    'allow_post_due_date_deduction', ${c('allow_post_due_date_deduction')}, 'metadata', ${c('metadata')},
    'version', ${c('version')}, 'created_at', ${isoInstant(c('created_at'))}, 'updated_at', ${isoInstant(c('updated_at'))},
    'cancelled_at', ${isoInstant(c('cancelled_at'))}
  )`;
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
