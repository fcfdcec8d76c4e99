import { sql, type RawBuilder } from 'kysely';
import type { z } from 'zod';
import type { Executor } from '../../platform/db/connection.ts';
import { fixedSql } from '../../platform/db/fixed-sql.ts';
import { statusListSql } from '../../platform/db/status-transitions-sql.ts';
import { timeOrderedUuidSql } from '../../platform/db/time-ordered-uuid-sql.ts';
import { INSTALMENT_STATUSES_STILL_COLLECTING } from './schedule-outcome.ts';
import type { expectedPaymentSchema, instalmentResponseSchema, ScheduleResource } from './schedule-resource.ts';

// schedule.updated events written by the statement that moves the schedules (settleSchedules moves
// every schedule a reconciliation touched at once), so the event is built in SQL next to the rows, as
// payment events are (payment-event-repository.ts). Unlike those, it stores its whole payload: a
// schedule changes status once or twice in its life, so there is no volume to save, and the payload
// shows the instalments as they were at that moment.

/** toISOString in SQL: UTC, milliseconds (truncated, as node-pg's Date is), 'Z'. */
const isoInstantSql = (value: RawBuilder<unknown>) => sql`to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

function jsonbObject(fields: Record<string, RawBuilder<unknown>>): RawBuilder<unknown> {
  return sql`jsonb_build_object(${sql.join(Object.entries(fields).map(([name, value]) => sql`${sql.lit(name)}, ${value}`))})`;
}

/**
 * toScheduleResource (schedule-resource.ts) as a jsonb expression over a row of `alias` (the schedules
 * columns), its instalments read from payment_requests. Each map below is typed by its schema, so a
 * field added to the resource does not compile until it is rendered here too; the schedule event tests
 * hold the two to each other value by value. Every value but the instants is already what the API shows
 * (uuids, text, integers, dates as 'YYYY-MM-DD', the metadata jsonb).
 */
function scheduleResourceJsonbOf(alias: string): RawBuilder<unknown> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  const instalment = (name: string) => sql.ref(`i.${name}`);
  const instalmentFields: Record<keyof z.infer<typeof instalmentResponseSchema>, RawBuilder<unknown>> = {
    instalment_number: instalment('instalment_number'),
    payment_id: instalment('id'),
    amount: instalment('amount'),
    due_date: instalment('due_date'),
    target_pay_date: instalment('target_pay_date'),
    status: instalment('status'),
  };
  // expectedPayments (expected-payments.ts): the instalments that may still collect, what is still owed of each.
  const expectedPaymentFields: Record<keyof z.infer<typeof expectedPaymentSchema>, RawBuilder<unknown>> = {
    instalment_number: instalment('instalment_number'),
    payment_id: instalment('id'),
    pay_date: instalment('target_pay_date'),
    amount: sql`${instalment('amount')} - ${instalment('collected_amount')}`,
    currency: instalment('currency'),
  };
  const instalmentsOf = (fields: Record<string, RawBuilder<unknown>>, where: RawBuilder<unknown>) =>
    sql`coalesce((select jsonb_agg(${jsonbObject(fields)} order by i.instalment_number)
                  from payment_requests i where i.schedule_id = ${column('id')} and ${where}), '[]'::jsonb)`;
  const fields: Record<keyof ScheduleResource, RawBuilder<unknown>> = {
    id: column('id'),
    mandate_id: column('mandate_id'),
    status: column('status'),
    status_reason: column('status_reason'),
    currency: column('currency'),
    total_amount: column('total_amount'),
    instalment_count: column('instalment_count'),
    metadata: column('metadata'),
    version: column('version'),
    created_at: isoInstantSql(column('created_at')),
    updated_at: isoInstantSql(column('updated_at')),
    instalments: instalmentsOf(instalmentFields, sql`true`),
    expected_payments: instalmentsOf(expectedPaymentFields, sql`i.status in (${statusListSql(INSTALMENT_STATUSES_STILL_COLLECTING)})`),
  };
  return jsonbObject(fields);
}

/**
 * An `insert into events` of one schedule.updated per row of `source` (a CTE or table name whose rows
 * have the schedules columns, as they are after the change), with the payload buildEvent
 * (events/outbox.ts) would have stored: a time-ordered id, the type, the transaction's now() and the
 * schedule as GET /schedules/{schedule_id} shows it. In schedule order. For a WITH clause of the
 * statement that moves the schedules; the instalments are read as the statement sees them, so the
 * statement must not be the one that changes them.
 */
export function insertScheduleUpdatedEventsSql(source: string): RawBuilder<unknown> {
  return fixedSql(`schedule.updated events from ${source}`, () => {
    const data = scheduleResourceJsonbOf('e');
    return sql`
      insert into events (id, type, biller_client_id, resource_type, resource_id, created_at, payload)
      select e.event_id, 'schedule.updated', e.biller_client_id, 'schedule', e.id, now(),
             jsonb_build_object('id', e.event_id, 'type', 'schedule.updated', 'created_at', ${isoInstantSql(sql`now()`)}, 'data', ${data})
      from (select ${timeOrderedUuidSql} as event_id, s.* from ${sql.table(source)} s order by s.id) e
      order by e.event_id
    `;
  });
}

/** schedule.updated for the schedules as they are now, in one statement (a change an earlier statement made); returns how many. */
export async function recordScheduleUpdatedEvents(db: Executor, scheduleIds: readonly string[]): Promise<number> {
  if (scheduleIds.length === 0) return 0;
  const result = await sql<{ events: number }>`
    with changed_schedules as (select * from schedules where id = any(${[...scheduleIds]}::uuid[])),
    written as (${insertScheduleUpdatedEventsSql('changed_schedules')} returning 1)
    select count(*)::int as events from written
  `.execute(db);
  return result.rows[0]!.events;
}
