import type { Selectable } from 'kysely';
import { type Actor, describeActor, recordAction } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { BankHolidayRegion, BankHolidaysTable } from '../../platform/db/tables.ts';
import { ConflictError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';
import {
  deleteAdHocBankHoliday,
  insertAdHocBankHoliday,
  listAdHocBankHolidays,
  listUnlockedPayDates,
  loadHolidays,
  setLockDates,
  type LockDateScope,
} from './bank-holiday-repository.ts';
import { publicBankHolidays } from './bank-holidays.ts';
import { lockDate } from './lock-date.ts';
import type { BankHolidayChange, BankHolidayResource } from './pay-calendar-resource.ts';

export interface BankHolidayEdit {
  actor: Actor;
  reason: string | null;
}

function adHocResource(row: Selectable<BankHolidaysTable>): BankHolidayResource {
  return {
    region: row.region,
    date: row.holiday_date,
    name: row.name,
    source: 'ad_hoc',
    added_by: row.added_by,
    created_at: isoInstant(row.created_at),
  };
}

/** A region's bank holidays in a year: the library's and the ad-hoc ones, each marked, in date order. */
export async function listBankHolidays(db: Executor, region: BankHolidayRegion, year: number): Promise<BankHolidayResource[]> {
  const library: BankHolidayResource[] = publicBankHolidays(region, year).map((holiday) => ({
    region,
    date: holiday.date,
    name: holiday.name,
    source: 'library',
    added_by: null,
    created_at: null,
  }));
  const adHoc = (await listAdHocBankHolidays(db, region, year)).map(adHocResource);
  return [...library, ...adHoc].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
}

/**
 * Lock dates are the cut-off less the provider's lead time in working days (in the payroll's
 * region), so a day that stops or starts being a working day, or a new lead time, moves them.
 * Only pay dates the nightly run has not locked are recomputed: a locked one has been locked and
 * instructed on the day it was locked. Gives how many moved.
 */
export async function recomputeLockDates(trx: Executor, scope: LockDateScope): Promise<number> {
  const payDates = await listUnlockedPayDates(trx, scope);
  const regions = [...new Set(payDates.map((payDate) => payDate.bank_holiday_region))];
  const holidaysOf = new Map(await Promise.all(regions.map(async (region) => [region, await loadHolidays(trx, region)] as const)));
  const changes = payDates
    .map((payDate) => ({
      ...payDate,
      new_lock_date: lockDate(payDate.payroll_cutoff_date, payDate.lead_time_working_days, holidaysOf.get(payDate.bank_holiday_region)!),
    }))
    .filter((payDate) => payDate.new_lock_date !== payDate.lock_date)
    .map((payDate) => ({ payroll_id: payDate.payroll_id, pay_date: payDate.pay_date, lock_date: payDate.new_lock_date }));
  return setLockDates(trx, changes);
}

/**
 * Adds a one-off bank holiday to a region, and in the same transaction moves the lock dates of the
 * region's unlocked pay dates that it affects. A day the library already has, or one already
 * added, is a conflict.
 */
export async function addBankHoliday(trx: Executor, holiday: { region: BankHolidayRegion; date: string; name: string }, edit: BankHolidayEdit): Promise<BankHolidayChange> {
  const year = Number(holiday.date.slice(0, 4));
  const published = publicBankHolidays(holiday.region, year).find((h) => h.date === holiday.date);
  if (published) {
    throw new ConflictError('bank-holiday-exists', `${holiday.date} is already a bank holiday in ${holiday.region} (${published.name})`);
  }
  const row = await insertAdHocBankHoliday(trx, {
    region: holiday.region,
    holiday_date: holiday.date,
    name: holiday.name,
    added_by: describeActor(edit.actor),
  });
  if (!row) throw new ConflictError('bank-holiday-exists', `${holiday.date} is already an added bank holiday in ${holiday.region}`);
  const lockDatesChanged = await recomputeLockDates(trx, { region: holiday.region });
  const resource = adHocResource(row);
  await recordAction(trx, {
    actor: edit.actor,
    action: 'bank_holiday.added',
    resourceType: 'bank_holiday',
    resourceId: `${holiday.region}/${holiday.date}`,
    reason: edit.reason,
    after: { ...resource, lock_dates_changed: lockDatesChanged },
  });
  return { bank_holiday: resource, lock_dates_changed: lockDatesChanged };
}

/**
 * Removes a day an operator added, and moves the lock dates it had moved back. The library's
 * days are the law of the land and cannot be removed here.
 */
export async function removeBankHoliday(trx: Executor, region: BankHolidayRegion, date: string, edit: BankHolidayEdit): Promise<BankHolidayChange> {
  const row = await deleteAdHocBankHoliday(trx, region, date);
  if (!row) {
    const published = publicBankHolidays(region, Number(date.slice(0, 4))).find((h) => h.date === date);
    if (published) {
      throw new ConflictError('library-bank-holiday', `${date} (${published.name}) is a published bank holiday in ${region}; only added days can be removed`);
    }
    throw new NotFoundError(`Added bank holiday ${date} in ${region}`);
  }
  const lockDatesChanged = await recomputeLockDates(trx, { region });
  const resource = adHocResource(row);
  await recordAction(trx, {
    actor: edit.actor,
    action: 'bank_holiday.removed',
    resourceType: 'bank_holiday',
    resourceId: `${region}/${date}`,
    reason: edit.reason,
    before: resource,
    after: { lock_dates_changed: lockDatesChanged },
  });
  return { bank_holiday: resource, lock_dates_changed: lockDatesChanged };
}
