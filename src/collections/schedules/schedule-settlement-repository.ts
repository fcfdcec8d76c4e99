import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { ScheduleStatus } from '../../platform/db/tables.ts';
import { fixedSql } from '../../platform/db/fixed-sql.ts';
import { fromStatusesSql, statusListSql } from '../../platform/db/status-transitions-sql.ts';
import { insertScheduleUpdatedEventsSql } from './schedule-event-repository.ts';
import { ENDED_MANDATE_STATUSES, INSTALMENT_STATUSES_COLLECTED_IN_FULL, INSTALMENT_STATUSES_STILL_COLLECTING, SCHEDULE_STATUS_OF_REASON } from './schedule-outcome.ts';
import { SCHEDULE_LIFECYCLE } from './schedule-transitions.ts';

/** Every status a settlement moves an active schedule to. */
const SETTLED_STATUSES = [...new Set(Object.values(SCHEDULE_STATUS_OF_REASON))] as ScheduleStatus[];

/**
 * scheduleOutcome (schedule-outcome.ts) as SQL: the reason an active schedule settles with, over `i`
 * (the aggregates of its instalments) and `m` (its mandate), null while it stays active. The branches
 * are the rule's, in its order; test/collections/schedules/settle-schedules.test.ts holds the two together.
 */
const settlementReasonSql = fixedSql('schedule settlement reason', () => {
  const lit = (reason: keyof typeof SCHEDULE_STATUS_OF_REASON) => sql.lit(reason);
  return sql`case when i.instalments = 0 then null
                  when i.any_failed then ${lit('instalment_failed')}
                  when i.any_still_collecting then null
                  when i.all_collected_in_full then ${lit('all_instalments_collected')}
                  when i.any_partly_collected then ${lit('instalments_not_collected_in_full')}
                  when m.status = 'revoked' then ${lit('mandate_revoked')}
                  when m.status in (${statusListSql(ENDED_MANDATE_STATUSES)}) then ${lit('mandate_ended')}
                  else ${lit('instalments_cancelled')} end`;
});

/** SCHEDULE_STATUS_OF_REASON as SQL, over `reason`. */
function statusOfReasonSql(reason: RawBuilder<unknown>): RawBuilder<unknown> {
  const branches = Object.entries(SCHEDULE_STATUS_OF_REASON).map(([from, to]) => sql`when ${sql.lit(from)} then ${sql.lit(to)}`);
  return sql`case ${reason} ${sql.join(branches, sql` `)} end`;
}

/**
 * Settles, set-based, the given schedules that are active and whose instalments say so
 * (scheduleOutcome): status and status_reason, one version more, and a schedule.updated event each, in
 * the caller's transaction. Every path that ends an instalment calls it with that instalment's schedule,
 * so a schedule settles in the transaction that ended its last open instalment. Returns how many moved;
 * a second call moves nothing and writes no event (only active schedules move).
 *
 * The schedules are row-locked first, in id order, by a statement of their own: two transactions that
 * each end one of a schedule's last two instalments (a reconciliation and a biller's cancel) would
 * otherwise each see the other's instalment still open, and the schedule would never settle. The
 * second to take the lock reads, in the next statement, what the first committed.
 */
export async function settleSchedules(db: Executor, scheduleIds: readonly string[]): Promise<number> {
  if (scheduleIds.length === 0) return 0;
  const locked = await sql<{ id: string }>`
    select id from schedules
    where id = any(${[...new Set(scheduleIds)]}::uuid[]) and status in (${fromStatusesSql(SCHEDULE_LIFECYCLE, SETTLED_STATUSES, ['active'])})
    order by id
    for update
  `.execute(db);
  if (locked.rows.length === 0) return 0;
  const result = await sql<{ settled: number }>`
    with outcomes as (
      select s.id, ${settlementReasonSql} as reason
      from schedules s
      join mandates m on m.id = s.mandate_id
      cross join lateral (
        select count(*) as instalments,
               coalesce(bool_or(pr.status = 'failed'), false) as any_failed,
               coalesce(bool_or(pr.status in (${statusListSql(INSTALMENT_STATUSES_STILL_COLLECTING)})), false) as any_still_collecting,
               coalesce(bool_and(pr.status in (${statusListSql(INSTALMENT_STATUSES_COLLECTED_IN_FULL)})), false) as all_collected_in_full,
               coalesce(bool_or(pr.status = 'partially_collected'), false) as any_partly_collected
        from payment_requests pr where pr.schedule_id = s.id
      ) i
      where s.id = any(${locked.rows.map((r) => r.id)}::uuid[]) and s.status = 'active'
    ),
    settled as (
      update schedules s
      set status = ${statusOfReasonSql(sql`o.reason`)}, status_reason = o.reason, version = s.version + 1, updated_at = now()
      from outcomes o
      where s.id = o.id and o.reason is not null
        and s.status in (${fromStatusesSql(SCHEDULE_LIFECYCLE, SETTLED_STATUSES, ['active'])})
      returning s.*
    ),
    events as (${insertScheduleUpdatedEventsSql('settled')})
    select count(*)::int as settled from settled
  `.execute(db);
  return result.rows[0]!.settled;
}

/** settleSchedules for the schedules of these payment requests (those that are instalments). */
export async function settleSchedulesOfPayments(db: Executor, paymentIds: readonly string[]): Promise<number> {
  if (paymentIds.length === 0) return 0;
  const rows = await sql<{ schedule_id: string }>`
    select distinct schedule_id from payment_requests where id = any(${[...paymentIds]}::uuid[]) and schedule_id is not null
  `.execute(db);
  return settleSchedules(
    db,
    rows.rows.map((row) => row.schedule_id),
  );
}
