import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

export interface BrokenRecordLink {
  id: string;
  problem: string;
}

/**
 * A payroll's deduction records whose references do not hold. Their foreign keys are gone (migration
 * 20261122031000: both writers establish them in the same transaction), so this is the check, and a
 * stricter one than the keys were: the employee is employed on the payroll, the pay period is the pay
 * date's, a confirmation is for the same payroll and pay date, the receiving client exists (or the
 * record has none, being of a confirmation an operator imported). Always empty unless something wrote
 * records outside the push and confirmation services. For audits and the tests.
 */
export async function findBrokenRecordLinks(db: Executor, payrollId: string): Promise<BrokenRecordLink[]> {
  const result = await sql<BrokenRecordLink>`
    select r.id,
           case when pd.payroll_id is null then 'pay date missing'
                when pd.pay_period <> r.pay_period then 'pay period is not the pay date''s'
                when e.employee_id is null then 'employee not on the payroll'
                when r.confirmation_id is not null and c.id is null then 'confirmation missing'
                when r.confirmation_id is not null and (c.payroll_id <> r.payroll_id or c.pay_date <> r.pay_date) then 'confirmation is for another pay date'
                when r.received_by_client_id is null then 'no receiving client, and not of a confirmation an operator imported'
                else 'receiving client missing' end as problem
    from deduction_records r
    left join pay_dates pd on pd.payroll_id = r.payroll_id and pd.pay_date = r.pay_date
    left join employments e on e.payroll_id = r.payroll_id and e.employee_id = r.employee_id
    left join confirmations c on c.id = r.confirmation_id
    left join clients cl on cl.id = r.received_by_client_id
    where r.payroll_id = ${payrollId}
      and (pd.payroll_id is null or pd.pay_period <> r.pay_period or e.employee_id is null
           or (r.received_by_client_id is not null and cl.id is null)
           or (r.received_by_client_id is null and (c.id is null or c.submitted_by is null))
           or (r.confirmation_id is not null and (c.id is null or c.payroll_id <> r.payroll_id or c.pay_date <> r.pay_date)))
    order by r.id
  `.execute(db);
  return result.rows;
}
