import { producerConnection } from '../queue/connections.ts';
import { createQueue, defaultJobOptions, queueNames } from '../queue/queues.ts';
import type { DependencyHealth } from '../runtime/dependency-health.ts';

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
  health?: DependencyHealth,
): ReconciliationRequester {
  // Its connection errors go to the health monitor (one line per outage), never printed per retry.
  const queue = createQueue(queueNames.payDates, producerConnection(redisUrl), prefix, health);
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
