import { z } from 'zod';
import type { Executor } from '../db/connection.ts';
import type { PayDateExceptionStage } from '../db/tables.ts';
import { listOpenPayDateExceptions, recordPayDateFailures, resolvePayDateExceptions, type PayDateKey } from './pay-date-exception-repository.ts';

// Work over many payroll pay dates (the remittance refresh and funding) goes on when
// one pay date cannot be handled: that pay date is left as it was and recorded as an exception of its
// own, for an operator to see and fix, and every other pay date is done. Its next success resolves it.

export type { PayDateKey };
export type PayDateFailure = PayDateKey & { detail: string };

/** What went wrong, in the words the error gives, short enough to list. */
export function failureDetail(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 500 ? `${message.slice(0, 497)}...` : message;
}

/**
 * Each item's work, one pay date at a time: the results of those that went through, and a failure
 * per pay date whose work threw. Only for work without I/O, which leaves nothing half done.
 */
export function eachPayDate<T extends PayDateKey, R>(items: readonly T[], work: (item: T) => R): { results: R[]; failures: PayDateFailure[] } {
  const results: R[] = [];
  const failures: PayDateFailure[] = [];
  for (const item of items) {
    try {
      results.push(work(item));
    } catch (error) {
      failures.push({ payrollId: item.payrollId, payDate: item.payDate, detail: failureDetail(error) });
    }
  }
  return { results, failures };
}

/** Records a stage's outcome over the pay dates it handled (`scope`): its failures opened, its successes resolved. */
export async function notePayDateStage(db: Executor, stage: PayDateExceptionStage, scope: readonly PayDateKey[], failures: readonly PayDateFailure[]): Promise<void> {
  await recordPayDateFailures(db, stage, failures);
  await resolvePayDateExceptions(db, stage, scope, failures);
}

export const payDateExceptionSchema = z
  .object({
    id: z.uuid(),
    payroll_id: z.uuid(),
    payroll: z.string(),
    employer: z.string(),
    pay_date: z.iso.date(),
    stage: z.enum(['remittance', 'funding']).meta({ description: 'Where it failed: the remittance refresh (what the pay date is owed) or funding (what its cash pays).' }),
    detail: z.string(),
    first_seen_at: z.iso.datetime(),
    last_seen_at: z.iso.datetime(),
    occurrences: z.number().int(),
  })
  .meta({
    id: 'PayDateException',
    description:
      'A payroll pay date that work over many pay dates could not handle and left as it was, while the others went on. ' + 'Open until the stage next succeeds for it.',
    example: {
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8b',
      payroll_id: '019a7b2c-0000-7000-8000-000000000001',
      payroll: 'Monthly',
      employer: 'Acme Manufacturing Ltd',
      pay_date: '2026-11-27',
      stage: 'remittance',
      detail:
        "What payroll reported for payroll 019a7b2c-0000-7000-8000-000000000001 pay date 2026-11-27 adds up to more than the service carries exactly (past 2^53 of the currency's smallest unit)",
      first_seen_at: '2026-11-28T02:00:04.000Z',
      last_seen_at: '2026-11-28T09:00:01.000Z',
      occurrences: 4,
    },
  });
export type PayDateExceptionResource = z.infer<typeof payDateExceptionSchema>;

/** Open exceptions, the most recently seen first. */
export async function listPayDateExceptions(db: Executor, limit = 100): Promise<PayDateExceptionResource[]> {
  return (await listOpenPayDateExceptions(db, limit)).map((row) => ({
    id: row.id,
    payroll_id: row.payroll_id,
    payroll: row.payroll_name,
    employer: row.employer_name,
    pay_date: row.pay_date,
    stage: row.stage,
    detail: row.detail,
    first_seen_at: new Date(row.first_seen_at).toISOString(),
    last_seen_at: new Date(row.last_seen_at).toISOString(),
    occurrences: row.occurrences,
  }));
}
