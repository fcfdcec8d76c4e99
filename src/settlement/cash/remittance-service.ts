import type { Selectable } from 'kysely';
import { z } from 'zod';
import { loadHolidays } from '../../directory/calendars/bank-holiday-repository.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import type { HolidayCalendar } from '../../directory/calendars/working-days.ts';
import type { Config } from '../../platform/config/config.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import type { RemittancesTable, RemittanceStatus } from '../../platform/db/tables.ts';
import { recordEvents, type EventToRecord } from '../../platform/events/outbox.ts';
import { exactMinorUnits } from '../../platform/money/major-units.ts';
import { eachPayDate, notePayDateStage } from '../../platform/pay-date-exceptions/pay-date-exceptions.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import {
  advisoryLockCash,
  listBillersOfPayDates,
  listRemittanceFacts,
  markOverdue,
  rowLockRemittances,
  saveRemittances,
  type RemittanceFacts,
  type RemittanceRow,
} from './remittance-repository.ts';
import { amountOwed, expectedRemittance, remittanceDueDate, remittanceStatus } from './remittance-status.ts';

export interface RemittancePolicy {
  today: string;
  lateWorkingDays: number;
  /** Bank clearing days (England and Wales): remittances travel between banks. */
  holidays: HolidayCalendar;
}

/** How far back a refresh looks: a remittance is settled, or an exception, well before this. */
export const REMITTANCE_WINDOW_DAYS = 120;

export function refreshWindowStart(today: string): string {
  const date = new Date(`${today}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - REMITTANCE_WINDOW_DAYS);
  return date.toISOString().slice(0, 10);
}

export const remittanceStatusSchema = z.enum(['expected', 'received', 'short', 'over', 'late', 'shortfall']).meta({
  description:
    '`expected`: nothing received and not yet past its due date; `received`: exactly what is expected (also when that is 0); ' +
    '`short`: part received, whether or not past its due date (`overdue_at` says when it went past it); `over`: more than expected; ' +
    '`late`: nothing received and past its due date; `shortfall`: more paid out of the pay date than received, after the bank ' +
    'took back a credit (owed back). As of the last time the remittance was brought up to date: its lock, a re-run, a ' +
    "reconciliation of payroll's report, a statement import or matching run, and the daily payout run.",
});

export const remittanceSchema = z
  .object({
    id: z.uuid(),
    payroll_id: z.uuid(),
    employer_id: z.uuid(),
    pay_date: z.iso.date(),
    currency: z.string(),
    payment_reference: z.string(),
    requested: z
      .number()
      .int()
      .meta({ description: "What the pay date's current deduction data asks the employer to remit (minor units); 0 when a re-run left nothing to ask for." }),
    deducted: z.number().int().nullable().meta({ description: 'What payroll reported it deducted (minor units); null until it has reported.' }),
    expected: z.number().int().meta({
      description:
        'What the employer owes (minor units): what was requested from the lock on, what payroll reported deducting once it has; a re-run changes it, and money already matched stays matched.',
    }),
    received: z.number().int().meta({ description: 'Matched from bank statements so far.' }),
    owed: z.number().int().meta({ description: 'expected minus received, never below zero.' }),
    shortfall: z
      .number()
      .int()
      .meta({ description: 'Paid out beyond what was received, after the bank reversed a credit already paid out: owed back (status `shortfall` while above zero).' }),
    status: remittanceStatusSchema,
    due_date: z.iso
      .date()
      .meta({ description: 'The last day it is on time (REMITTANCE_LATE_WORKING_DAYS bank working days after the pay date): after it, one with nothing received is `late`.' }),
    overdue_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When it was first found past its due date without all it expects, and its billers were told (remittance.overdue); null until then.' }),
    version: z.number().int(),
    updated_at: z.iso.datetime(),
  })
  .meta({
    id: 'Remittance',
    description:
      "A payroll pay date's remittance: what its employer owes our collection account for it, and what has arrived. It exists from the pay date's lock on, expecting what was requested, before any statement arrives.",
    example: {
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8b',
      payroll_id: '019a7b2c-0000-7000-8000-000000000001',
      employer_id: '019a7b2c-0000-7000-8000-000000000002',
      pay_date: '2026-11-27',
      currency: 'GBP',
      payment_reference: 'SDR261127P00000012',
      requested: 1_520_000,
      deducted: 1_498_000,
      expected: 1_498_000,
      received: 1_000_000,
      owed: 498_000,
      shortfall: 0,
      status: 'short',
      due_date: '2026-12-02',
      overdue_at: null,
      version: 3,
      updated_at: '2026-11-28T10:15:00.000Z',
    },
  });
export type RemittanceResource = z.infer<typeof remittanceSchema>;

export function toRemittanceResource(row: Selectable<RemittancesTable>): RemittanceResource {
  return {
    id: row.id,
    payroll_id: row.payroll_id,
    employer_id: row.employer_id,
    pay_date: row.pay_date,
    currency: row.currency,
    payment_reference: row.payment_reference,
    requested: row.requested,
    deducted: row.deducted,
    expected: row.expected,
    received: row.received,
    owed: amountOwed({ expected: row.expected, received: row.received }),
    shortfall: row.shortfall,
    status: row.status,
    due_date: row.due_date,
    overdue_at: row.overdue_at ? new Date(row.overdue_at).toISOString() : null,
    version: row.version,
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/**
 * What a biller hears of a remittance its collections travel in: which payroll pay date, its status and
 * when it is due, never the employer's amounts (they sum every biller's deductions).
 */
export const remittanceNoticeSchema = z
  .object({
    id: z.uuid(),
    payroll_id: z.uuid(),
    pay_date: z.iso.date(),
    status: remittanceStatusSchema,
    due_date: z.iso.date(),
  })
  .meta({
    id: 'RemittanceNotice',
    description:
      "The `data` of a remittance event: the employer's remittance for a payroll pay date the biller's collections travel in, with its " +
      "status and due date, never the employer's amounts (they sum every biller's deductions).",
    example: {
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8b',
      payroll_id: '019a7b2c-0000-7000-8000-000000000001',
      pay_date: '2026-11-27',
      status: 'received',
      due_date: '2026-12-01',
    },
  });

export type RemittanceNotice = z.infer<typeof remittanceNoticeSchema>;

/** A remittance its billers are to hear about. */
export interface RemittanceEventSubject {
  id: string;
  payrollId: string;
  payDate: string;
  status: RemittanceStatus;
  dueDate: string;
}

export function remittanceEventData(remittance: RemittanceEventSubject): RemittanceNotice {
  return { id: remittance.id, payroll_id: remittance.payrollId, pay_date: remittance.payDate, status: remittance.status, due_date: remittance.dueDate };
}

export async function remittanceEvents(
  trx: Executor,
  type: 'remittance.received' | 'remittance.overdue' | 'remittance.reversed',
  remittances: readonly RemittanceEventSubject[],
): Promise<EventToRecord[]> {
  // Grouped by pay date first: a night's statement tells 10,000 remittances' billers at once.
  const billersOfPayDate = new Map<string, string[]>();
  for (const b of await listBillersOfPayDates(trx, remittances)) {
    const key = `${b.payroll_id}/${b.pay_date}`;
    const billers = billersOfPayDate.get(key);
    if (billers) billers.push(b.biller_client_id);
    else billersOfPayDate.set(key, [b.biller_client_id]);
  }
  return remittances.flatMap((remittance) =>
    (billersOfPayDate.get(`${remittance.payrollId}/${remittance.payDate}`) ?? []).map((billerClientId) => ({
      type,
      billerClientId,
      resourceType: 'remittance',
      resourceId: remittance.id,
      data: remittanceEventData(remittance),
    })),
  );
}

export interface RefreshOutcome {
  created: number;
  updated: number;
  /** Pay dates left as they were, each recorded as an exception of the remittance stage. */
  failed: number;
}

type PayDateKey = { payrollId: string; payDate: string };
const keyOf = (key: PayDateKey) => `${key.payrollId}/${key.payDate}`;

/**
 * The remittances the facts call for, as of `policy.today`: a new one for a pay date without, the
 * changed ones (what is requested, what payroll reported, what is expected, the status), nothing for
 * the rest. A pay date whose amounts cannot be carried (a report past 2^53 stored before reports were
 * bounded) is a failure, left as it was.
 */
function remittancesCalledFor(facts: readonly RemittanceFacts[], policy: RemittancePolicy) {
  // A night's thousands of remittances share a few pay dates; counting working days is the slow part.
  const dueDates = new Map<string, string>();
  const dueDateOf = (payDate: string) => dueDates.get(payDate) ?? dueDates.set(payDate, remittanceDueDate(payDate, policy.lateWorkingDays, policy.holidays)).get(payDate)!;
  const { results, failures } = eachPayDate(
    facts.map((fact) => ({ ...fact, payrollId: fact.payroll_id, payDate: fact.pay_date })),
    (fact): RemittanceRow | null => {
      const deducted = fact.deducted === null ? null : exactMinorUnits(fact.deducted, `What payroll reported for payroll ${fact.payroll_id} pay date ${fact.pay_date}`);
      const expected = expectedRemittance({ requested: fact.requested, deducted });
      const dueDate = dueDateOf(fact.pay_date);
      const status = remittanceStatus({ expected, received: fact.received ?? 0, dueDate, today: policy.today, shortfall: fact.shortfall ?? 0 });
      const unchanged =
        fact.remittance_id !== null &&
        fact.expected === expected &&
        fact.status === status &&
        fact.recorded_requested === fact.requested &&
        fact.recorded_deducted === deducted &&
        fact.recorded_reference === fact.payment_reference;
      if (unchanged) return null;
      return {
        id: fact.remittance_id ?? timeOrderedUuid(),
        payrollId: fact.payroll_id,
        payDate: fact.pay_date,
        employerId: fact.employer_id,
        currency: fact.currency,
        paymentReference: fact.payment_reference,
        requested: fact.requested,
        deducted,
        expected,
        status,
        dueDate,
        readVersion: fact.version,
      };
    },
  );
  return { rows: results.filter((row) => row !== null), failures };
}

/** Writes what the facts call for; returns what was written and the rows another transaction changed first. */
async function bringInLine(trx: Executor, policy: RemittancePolicy, facts: readonly RemittanceFacts[]) {
  const { rows, failures } = remittancesCalledFor(facts, policy);
  const written = await saveRemittances(trx, rows);
  const known = new Set(facts.flatMap((fact) => (fact.remittance_id === null ? [] : [fact.remittance_id])));
  const done = rows.filter((row) => written.has(row.id));
  const outcome = { created: done.filter((row) => !known.has(row.id)).length, updated: done.filter((row) => known.has(row.id)).length };
  const scope = facts.map((fact) => ({ payrollId: fact.payroll_id, payDate: fact.pay_date }));
  const overtaken = rows.filter((row) => !written.has(row.id)).map((row) => ({ payrollId: row.payrollId, payDate: row.payDate }));
  return { outcome, failures, scope, overtaken };
}

/**
 * Brings each live payroll pay date's remittance in line with its current snapshot's requested payment
 * and payroll's report, for the pay dates of the last REMITTANCE_WINDOW_DAYS: a new remittance for a
 * pay date locked without one (the lock makes it, see expectRemittances; this catches any it missed), a
 * new expected amount when payroll reports or a re-run changes the request, and the status as of today.
 * A pay date whose amounts cannot be carried keeps its remittance as it was and is recorded as an
 * exception; the others go on. One that a lock, re-run or reconciliation changed while this read is
 * computed again under its row lock. Who is told of lateness is noteOverdueRemittances' business, after
 * matching has had its say. Call inside the cash advisory lock.
 */
export async function refreshRemittances(trx: Executor, policy: RemittancePolicy): Promise<RefreshOutcome> {
  const facts = await listRemittanceFacts(trx, { since: refreshWindowStart(policy.today) });
  const { outcome, failures, scope, overtaken } = await bringInLine(trx, policy, facts);
  await notePayDateStage(trx, 'remittance', scope, failures);
  if (overtaken.length === 0) return { ...outcome, failed: failures.length };
  const again = await expectRemittances(trx, policy, overtaken);
  return { created: outcome.created + again.created, updated: outcome.updated + again.updated, failed: failures.length + again.failed };
}

/** How often expectRemittances reads again after another transaction created a remittance it was creating. */
const EXPECT_ATTEMPTS = 3;

/**
 * The expected remittances of these payroll pay dates, brought in line with their current snapshot
 * and payroll's report, as refreshRemittances does for all of them; called in the transaction of the
 * lock, re-run or reconciliation that changed them (see expectedRemittancesFollowUp), so a pay date has
 * its remittance from the moment it is locked, and it expects what it should from the moment a re-run
 * or payroll's report changes that. Each remittance is row-locked before it is read, so nothing that
 * moves cash (a match, an unmatch, a reversal) changes it in between, and its matches and what it
 * received are kept: only what it expects, and so its status, change. A pay date with nothing
 * requested and no remittance (an empty snapshot) gets none. Safe to run twice: the second finds
 * nothing to change. Needs no cash advisory lock.
 */
export async function expectRemittances(trx: Executor, policy: RemittancePolicy, payDates: readonly PayDateKey[]): Promise<RefreshOutcome> {
  const total = { created: 0, updated: 0, failed: 0 };
  let pending = [...new Map(payDates.map((key) => [keyOf(key), key])).values()];
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > EXPECT_ATTEMPTS) throw new Error(`the remittances of ${pending.map(keyOf).join(', ')} kept changing while they were brought in line`);
    await rowLockRemittances(trx, pending);
    const facts = await listRemittanceFacts(trx, { payDates: pending });
    const { outcome, failures, scope, overtaken } = await bringInLine(trx, policy, facts);
    await notePayDateStage(trx, 'remittance', scope, failures);
    total.created += outcome.created;
    total.updated += outcome.updated;
    total.failed += failures.length;
    // Under the row lock only a remittance created meanwhile by another transaction is overtaken: locked next time.
    pending = overtaken;
  }
  return total;
}

/**
 * What the cycle's lock, re-run and reconciliation of payroll pay dates run in their own transaction
 * (the job processors hand it to them: the cycle never imports settlement): the pay dates' expected
 * remittances, as of the service's day, with the configured due dates.
 */
export function expectedRemittancesFollowUp(config: Pick<Config, 'SERVICE_TIME_ZONE' | 'REMITTANCE_LATE_WORKING_DAYS'>) {
  return async (trx: Executor, payDates: readonly PayDateKey[]): Promise<void> => {
    if (payDates.length === 0) return;
    await expectRemittances(trx, await remittancePolicyOf(trx, config), payDates);
  };
}

/** The remittance rules as configured, for today (the service time zone's) unless given. */
export async function remittancePolicyOf(
  db: Executor,
  config: Pick<Config, 'SERVICE_TIME_ZONE' | 'REMITTANCE_LATE_WORKING_DAYS'>,
  today = serviceToday(new Date(), config.SERVICE_TIME_ZONE),
): Promise<RemittancePolicy> {
  return { today, lateWorkingDays: config.REMITTANCE_LATE_WORKING_DAYS, holidays: await loadHolidays(db, 'england-and-wales') };
}

/**
 * Every live payroll pay date of the refresh window gets its remittance, as refreshRemittances makes
 * them, in a transaction of its own holding the cash advisory lock: what `deductions migrate` runs after
 * the migrations, so pay dates locked before remittances were made by the lock have theirs at once.
 */
export async function bringRemittancesUpToDate(db: Database, policy: RemittancePolicy): Promise<RefreshOutcome> {
  return db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    return refreshRemittances(trx, policy);
  });
}

/**
 * Remittances still owed money after their due date, not yet noted: stamped overdue, and their billers
 * told (remittance.overdue), once each. Run after matching, so a remittance the same statement pays
 * is never reported late.
 */
export async function noteOverdueRemittances(trx: Executor, policy: RemittancePolicy): Promise<number> {
  const overdue = await markOverdue(trx, policy.today);
  await recordEvents(
    trx,
    await remittanceEvents(
      trx,
      'remittance.overdue',
      overdue.map((r) => ({ id: r.id, payrollId: r.payroll_id, payDate: r.pay_date, status: r.status, dueDate: r.due_date })),
    ),
  );
  return overdue.length;
}
