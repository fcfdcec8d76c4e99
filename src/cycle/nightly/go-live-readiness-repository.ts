import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { PayrollReadinessFacts } from './go-live-readiness.ts';

export interface PayrollReadinessRow extends PayrollReadinessFacts {
  payrollId: string;
  payroll: string;
  employer: string;
  provider: string;
}

/** The lock facts (PayrollLockFacts) of a payroll `p` whose employer is `e`, with its id as payrollId. */
export const payrollLockFactColumns = sql`
  p.id as "payrollId", p.currency, e.salary_deduction_opt_in_status as "employerOptIn",
  exists (select 1 from collection_accounts ca where ca.currency = p.currency and ca.active) as "hasActiveCollectionAccount"
`;

/** The readiness facts of every live payroll (or one), as of `today`, in one statement. */
export async function listPayrollReadinessFacts(db: Executor, today: string, payrollId?: string): Promise<PayrollReadinessRow[]> {
  const { rows } = await sql<PayrollReadinessRow>`
    select p.name as payroll, e.name as employer, pp.name as provider, p.go_live_date as "goLiveDate", ${payrollLockFactColumns},
           open.ahead as "openPayDatesAhead", open.overdue as "overduePayDates", open.first_overdue as "firstOverduePayDate"
      from payrolls p
      join employers e on e.id = p.employer_id
      join payroll_providers pp on pp.id = p.payroll_provider_id
      cross join lateral (
        select count(*) filter (where pd.pay_date >= ${today}::date)::int as ahead,
               count(*) filter (where pd.lock_date < ${today}::date and pd.pay_date >= p.go_live_date)::int as overdue,
               (min(pd.pay_date) filter (where pd.lock_date < ${today}::date and pd.pay_date >= p.go_live_date))::text as first_overdue
          from pay_dates pd
         where pd.payroll_id = p.id and pd.locked_at is null
           and (p.go_live_date is null or pd.pay_date >= p.go_live_date)
      ) open
     where not pp.sandbox
       and (${payrollId ?? null}::uuid is null or p.id = ${payrollId ?? null}::uuid)
     order by e.name, p.name, p.id
  `.execute(db);
  return rows;
}
