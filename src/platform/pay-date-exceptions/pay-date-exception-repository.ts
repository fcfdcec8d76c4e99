import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { PayDateExceptionStage } from '../db/tables.ts';
import { timeOrderedUuid } from '../shared/time-ordered-uuid.ts';

export interface PayDateKey {
  payrollId: string;
  payDate: string;
}

/** Opens an exception per failed pay date, or notes it again (last seen, how often, the latest detail) when one is open. */
export async function recordPayDateFailures(db: Executor, stage: PayDateExceptionStage, failures: ReadonlyArray<PayDateKey & { detail: string }>): Promise<void> {
  if (failures.length === 0) return;
  await sql`
    insert into pay_date_exceptions (id, payroll_id, pay_date, stage, detail)
    select u.id, u.payroll_id, u.pay_date, ${stage}, u.detail
    from unnest(${failures.map(() => timeOrderedUuid())}::uuid[], ${failures.map((f) => f.payrollId)}::uuid[], ${failures.map((f) => f.payDate)}::date[],
                ${failures.map((f) => f.detail)}::text[]) as u(id, payroll_id, pay_date, detail)
    on conflict (payroll_id, pay_date, stage) where resolved_at is null
    do update set detail = excluded.detail, last_seen_at = now(), occurrences = pay_date_exceptions.occurrences + 1
  `.execute(db);
}

/** Resolves the stage's open exceptions of pay dates that went through: those in `scope` other than the ones that failed again. */
export async function resolvePayDateExceptions(
  db: Executor,
  stage: PayDateExceptionStage,
  scope: readonly PayDateKey[],
  stillFailing: readonly PayDateKey[],
): Promise<number> {
  if (scope.length === 0) return 0;
  const result = await sql`
    update pay_date_exceptions e set resolved_at = now()
    where e.stage = ${stage} and e.resolved_at is null
      and (e.payroll_id, e.pay_date) in (select * from unnest(${scope.map((k) => k.payrollId)}::uuid[], ${scope.map((k) => k.payDate)}::date[]))
      and (e.payroll_id, e.pay_date) not in (select * from unnest(${stillFailing.map((k) => k.payrollId)}::uuid[], ${stillFailing.map((k) => k.payDate)}::date[]))
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Open exceptions, the most recently seen first, with the payroll's and employer's names. */
export async function listOpenPayDateExceptions(db: Executor, limit = 100) {
  return db
    .selectFrom('pay_date_exceptions as e')
    .innerJoin('payrolls as p', 'p.id', 'e.payroll_id')
    .innerJoin('employers as em', 'em.id', 'p.employer_id')
    .select([
      'e.id',
      'e.payroll_id',
      'p.name as payroll_name',
      'em.name as employer_name',
      'e.pay_date',
      'e.stage',
      'e.detail',
      'e.first_seen_at',
      'e.last_seen_at',
      'e.occurrences',
    ])
    .where('e.resolved_at', 'is', null)
    .orderBy('e.last_seen_at', 'desc')
    .orderBy('e.id', 'desc')
    .limit(limit)
    .execute();
}
