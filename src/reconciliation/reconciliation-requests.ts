import { Queue } from 'bullmq';
import { producerConnection } from '../queue/connections.ts';
import { defaultJobOptions, queueNames } from '../queue/queues.ts';

export const reconcilePayDateJob = 'reconcile-pay-date';

/** Asks for a payroll pay date to be reconciled soon; many asks in a burst make one job. */
export interface ReconciliationRequester {
  request(payrollId: string, payDate: string): Promise<void>;
  close(): Promise<void>;
}

/** Quiet period after the last accepted record before reconciling (pushes arrive in bursts). */
export const RECONCILIATION_DEBOUNCE_MS = 5_000;

/**
 * BullMQ debouncing: one deduplication id per payroll pay date; each new request while the job
 * waits pushes it back (extend + replace), and a request while it runs queues exactly one more
 * (keepLastIfActive), so records that arrive mid-reconciliation are never missed.
 */
export function queueReconciliationRequester(
  redisUrl: string,
  prefix: string,
  debounceMs = RECONCILIATION_DEBOUNCE_MS,
): ReconciliationRequester {
  const queue = new Queue(queueNames.payDates, { connection: producerConnection(redisUrl), prefix });
  return {
    async request(payrollId, payDate) {
      await queue.add(
        reconcilePayDateJob,
        { payrollId, payDate },
        {
          ...defaultJobOptions,
          delay: debounceMs,
          deduplication: { id: `reconcile.${payrollId}.${payDate}`, ttl: debounceMs, extend: true, replace: true, keepLastIfActive: true },
        },
      );
    },
    close: () => queue.close(),
  };
}
