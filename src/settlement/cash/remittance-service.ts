import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { HolidayCalendar } from '../../directory/calendars/working-days.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { RemittancesTable } from '../../platform/db/tables.ts';
import { recordEvents, type EventToRecord } from '../../platform/events/outbox.ts';
import { exactMinorUnits } from '../../platform/money/major-units.ts';
import { eachPayDate, notePayDateStage } from '../../platform/pay-date-exceptions/pay-date-exceptions.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import { listBillersOfPayDates, listRemittanceFacts, markOverdue, saveRemittances, type RemittanceRow } from './remittance-repository.ts';
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

export const remittanceStatusSchema = z.enum(['expected', 'received', 'short', 'over', 'late', 'shortfall']);

export const remittanceSchema = z
  .object({
    id: z.uuid(),
    payroll_id: z.uuid(),
    employer_id: z.uuid(),
    pay_date: z.iso.date(),
    currency: z.string(),
    payment_reference: z.string(),
    requested: z.number().int().meta({ description: 'What the deduction data asked the employer to remit (minor units).' }),
    deducted: z.number().int().nullable().meta({ description: 'What payroll reported it deducted; null until it has reported.' }),
    expected: z.number().int().meta({ description: 'What the employer owes: deducted once reported, requested before.' }),
    received: z.number().int().meta({ description: 'Matched from bank statements so far.' }),
    owed: z.number().int().meta({ description: 'expected minus received, never below zero.' }),
    shortfall: z
      .number()
      .int()
      .meta({ description: 'Paid out beyond what was received, after the bank reversed a credit already paid out: owed back (status `shortfall` while above zero).' }),
    status: remittanceStatusSchema,
    due_date: z.iso.date().meta({ description: 'After this day a remittance not fully received is late.' }),
    overdue_at: z.iso.datetime().nullable(),
    version: z.number().int(),
    updated_at: z.iso.datetime(),
  })
  .meta({
    id: 'Remittance',
    description: "A payroll pay date's remittance: what its employer owes our collection account for it, and what has arrived.",
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
export function remittanceEventData(remittance: { id: string; payrollId: string; payDate: string; status: string; dueDate: string }) {
  return { id: remittance.id, payroll_id: remittance.payrollId, pay_date: remittance.payDate, status: remittance.status, due_date: remittance.dueDate };
}

export async function remittanceEvents(
  trx: Executor,
  type: 'remittance.received' | 'remittance.overdue' | 'remittance.reversed',
  remittances: ReadonlyArray<{ id: string; payrollId: string; payDate: string; status: string; dueDate: string }>,
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

/**
 * Brings each live payroll pay date's remittance in line with its current snapshot's requested payment
 * and payroll's report: a new remittance when a pay date locks, a new expected amount when payroll
 * reports or a re-run changes the request, and the status as of today. A pay date whose amounts cannot
 * be carried (a report past 2^53 stored before reports were bounded) keeps its remittance as it was
 * and is recorded as an exception; the others go on. Who is told of lateness is
 * noteOverdueRemittances' business, after matching has had its say. Call inside the cash advisory lock.
 */
export async function refreshRemittances(trx: Executor, policy: RemittancePolicy, one?: { payrollId: string; payDate: string }): Promise<RefreshOutcome> {
  const facts = await listRemittanceFacts(trx, refreshWindowStart(policy.today), one);
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
      if (fact.remittance_id !== null && fact.expected === expected && fact.status === status) return null;
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
      };
    },
  );
  const rows = results.filter((row) => row !== null);
  const known = new Set(facts.filter((fact) => fact.remittance_id !== null).map((fact) => fact.remittance_id));
  const created = rows.filter((row) => !known.has(row.id)).length;
  await saveRemittances(trx, rows);
  await notePayDateStage(
    trx,
    'remittance',
    facts.map((fact) => ({ payrollId: fact.payroll_id, payDate: fact.pay_date })),
    failures,
  );
  return { created, updated: rows.length - created, failed: failures.length };
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
