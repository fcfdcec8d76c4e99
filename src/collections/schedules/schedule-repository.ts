import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { ScheduleStatus, ScheduleStatusReason } from '../../platform/db/tables.ts';
import { type PagingQuery } from '../../platform/shared/paging.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import { SCHEDULE_LIFECYCLE } from './schedule-transitions.ts';

export interface NewSchedule {
  billerClientId: string;
  mandateId: string;
  currency: string;
  totalAmount: number;
  instalmentCount: number;
  metadata: unknown;
}

export async function insertSchedule(db: Executor, schedule: NewSchedule) {
  return db
    .insertInto('schedules')
    .values({
      biller_client_id: schedule.billerClientId,
      mandate_id: schedule.mandateId,
      currency: schedule.currency,
      total_amount: schedule.totalAmount,
      instalment_count: schedule.instalmentCount,
      metadata: schedule.metadata === null || schedule.metadata === undefined ? null : JSON.stringify(schedule.metadata),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSchedule(db: Executor, billerClientId: string, scheduleId: string) {
  return db.selectFrom('schedules').selectAll().where('id', '=', scheduleId).where('biller_client_id', '=', billerClientId).executeTakeFirst();
}

/** Row-locks the schedule so two cancels (or a cancel and a status update) serialise. */
export async function findScheduleForUpdate(db: Executor, billerClientId: string, scheduleId: string) {
  return db.selectFrom('schedules').selectAll().where('id', '=', scheduleId).where('biller_client_id', '=', billerClientId).forUpdate().executeTakeFirst();
}

/** The biller's cancel: `reason` is scheduleOutcomeOfBillerCancel's. */
export async function markScheduleCancelled(db: Executor, scheduleId: string, reason: ScheduleStatusReason) {
  return db
    .updateTable('schedules')
    .set({ status: 'cancelled', status_reason: reason, version: sql`version + 1`, updated_at: sql`now()` })
    .where('id', '=', scheduleId)
    .where('status', 'in', SCHEDULE_LIFECYCLE.fromStatuses('cancelled'))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface ScheduleFilters {
  status?: ScheduleStatus | undefined;
  mandateId?: string | undefined;
}

export async function listSchedules(db: Executor, billerClientId: string, filters: ScheduleFilters, paging: PagingQuery) {
  let query = db.selectFrom('schedules').selectAll().where('biller_client_id', '=', billerClientId);
  if (filters.status) query = query.where('status', '=', filters.status);
  if (filters.mandateId) query = query.where('mandate_id', '=', filters.mandateId);
  return applyPaging(query, 'schedules', paging).execute();
}
