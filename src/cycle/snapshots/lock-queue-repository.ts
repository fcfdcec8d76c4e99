import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

/**
 * Pending payment requests (of those given) that the nightly lock would not find: no row in the lock
 * queue (pending_payment_requests), or one at another payroll or target pay date than the request's.
 * The database's triggers keep the queue (migration 20261201010000), so this is always empty unless
 * something has gone around them. For audits and the invariant tests.
 */
export async function findPendingRequestsOffTheLockQueue(db: Executor, paymentRequestIds: readonly string[]) {
  if (paymentRequestIds.length === 0) return [];
  const result = await sql<{ id: string; queued_at: string | null }>`
    select pr.id, to_char(q.target_pay_date, 'YYYY-MM-DD') as queued_at
    from payment_requests pr
    left join pending_payment_requests q on q.payment_request_id = pr.id
    where pr.id = any(${[...paymentRequestIds]}::uuid[]) and pr.status = 'pending'
      and (q.payment_request_id is null or q.payroll_id <> pr.payroll_id or q.target_pay_date <> pr.target_pay_date)
    order by pr.id
  `.execute(db);
  return result.rows;
}
