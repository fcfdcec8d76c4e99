import { producerConnection, type RedisTarget } from '../../platform/runtime/redis-connections.ts';
import { debouncedReconcileJobOptions, queueNames, RECONCILIATION_DEBOUNCE_MS, reconcilePayDateJob } from '../../platform/queue/job-catalogue.ts';
import { enqueueJob } from '../../platform/queue/job-contract.ts';
import { createQueue } from '../../platform/queue/queues.ts';
import type { DependencyHealth } from '../../platform/runtime/dependency-health.ts';

/** Asks for a payroll pay date to be reconciled soon; many asks in a burst make one job. */
export interface ReconciliationRequester {
  request(payrollId: string, payDate: string): Promise<void>;
  close(): Promise<void>;
}

/** One debounced job per payroll pay date (see debouncedReconcileJobOptions). */
export function queueReconciliationRequester(redis: RedisTarget, prefix: string, debounceMs = RECONCILIATION_DEBOUNCE_MS, health?: DependencyHealth): ReconciliationRequester {
  // Its connection errors go to the health monitor (one line per outage), never printed per retry.
  const queue = createQueue(queueNames.payDates, producerConnection(redis), prefix, health);
  return {
    async request(payrollId, payDate) {
      await enqueueJob(queue, reconcilePayDateJob, { payrollId, payDate }, debouncedReconcileJobOptions(payrollId, payDate, debounceMs));
    },
    close: () => queue.close(),
  };
}
