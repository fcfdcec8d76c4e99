import type { FlowProducer, Job } from 'bullmq';
import type { Database } from '../db/connection.ts';
import { findPayDatesDueForLock } from './lock-repository.ts';
import type { LockOutcome } from './lock-service.ts';
import { buildNightlyFlow, type PayDatePair } from './nightly-flow.ts';

export interface NightlyTrigger {
  runDate: string;
  parentJobId: string;
  pairCount: number;
}

/** Adds the run's flow; a date already triggered keeps its flow (the ids collide, BullMQ adds nothing). */
export async function triggerNightlyRun(db: Database, flows: FlowProducer, runDate: string): Promise<NightlyTrigger> {
  const due = await findPayDatesDueForLock(db, runDate);
  const pairs: PayDatePair[] = due.map((row) => ({ payrollId: row.payroll_id, payDate: row.pay_date }));
  const node = await flows.add(buildNightlyFlow(runDate, pairs));
  return { runDate, parentJobId: node.job.id!, pairCount: pairs.length };
}

export interface NightlySummary {
  runDate: string;
  pairs: number;
  payrollsLocked: number;
  alreadyLocked: number;
  employees: number;
  paymentsInstructed: number;
  totalsByCurrency: Record<string, number>;
  failures: Array<{ jobId: string; reason: string }>;
}

/** What the summary needs of each lock job's result (and of the earlier pay dates it froze). */
export type LockFigures = Pick<LockOutcome, 'created' | 'employeeCount' | 'paymentsInstructed' | 'currency' | 'totalAmount'> & {
  earlier?: readonly LockFigures[];
};

/** Folds the children's results into the run summary (pure: no I/O). */
export function summarizeNightlyRun(
  runDate: string,
  outcomes: readonly LockFigures[],
  failures: Record<string, string>,
): NightlySummary {
  const totalsByCurrency: Record<string, number> = {};
  let employees = 0;
  let paymentsInstructed = 0;
  let payrollsLocked = 0;
  let alreadyLocked = 0;
  // A job that found its pay date already frozen (by a retry, or by a sibling that had to lock it
  // first) reports the existing snapshot: count what was frozen once, where it was frozen.
  for (const outcome of outcomes.flatMap((o) => [...(o.earlier ?? []), o])) {
    if (!outcome.created) {
      alreadyLocked++;
      continue;
    }
    payrollsLocked++;
    employees += outcome.employeeCount;
    paymentsInstructed += outcome.paymentsInstructed;
    totalsByCurrency[outcome.currency] = (totalsByCurrency[outcome.currency] ?? 0) + outcome.totalAmount;
  }
  return {
    runDate,
    pairs: outcomes.length + Object.keys(failures).length,
    payrollsLocked,
    alreadyLocked,
    employees,
    paymentsInstructed,
    totalsByCurrency,
    failures: Object.entries(failures).map(([jobKey, reason]) => ({ jobId: jobKey.split(':').pop()!, reason })),
  };
}

export async function collectNightlySummary(parent: Job): Promise<NightlySummary> {
  const values = await parent.getChildrenValues<LockFigures>();
  const failures = await parent.getIgnoredChildrenFailures();
  return summarizeNightlyRun(parent.data.runDate, Object.values(values), failures);
}
