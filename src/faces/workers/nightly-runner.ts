import type { Runtime } from '../../platform/runtime/runtime.ts';
import type { WorkerSource } from './worker-host.ts';
import { findLatestRunOfAnyDate, readRunProgress } from '../../cycle/nightly/nightly-run-repository.ts';
import { loadNightlySummary, retryRunPayDates, triggerNightlyRun, type NightlySummary, type RunRetry, type RunTrigger } from '../../cycle/nightly/nightly-service.ts';
import { NotFoundError } from '../../platform/shared/domain-errors.ts';

export interface NightlyProgress {
  done: number;
  total: number;
}

/**
 * Runs the nightly cycle for one date now and waits for it: starts the run (or joins the date's
 * unfinished one), works it with in-process workers (the given host's, or its own, started with
 * `startWorkers`; any `deductions work` processes share the load), and reports progress as pay
 * dates resolve. The summary is what the database says the run did, read once it has finished.
 */
export async function runNightlyNow(
  runtime: Runtime,
  runDate: string,
  options: { onProgress?: (progress: NightlyProgress) => void; pollMs?: number; trigger?: RunTrigger } & WorkerSource,
): Promise<NightlySummary> {
  const host = 'workers' in options ? options.workers : await options.startWorkers(runtime, { schedule: false });
  try {
    const { run } = await triggerNightlyRun(runtime.db, host.queues['pay-dates'], runDate, options.trigger ?? { kind: 'manual', by: 'cli' });
    for (;;) {
      const progress = await readRunProgress(runtime.db, run.id);
      options.onProgress?.({ done: progress.total - progress.pending, total: progress.total });
      if (progress.finishedAt !== null) return await loadNightlySummary(runtime.db, run.id);
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 200));
    }
  } finally {
    if (!('workers' in options)) await host.close();
  }
}

/**
 * Locks again, now, the pay dates a run skipped or failed (the latest run by default) and waits for
 * them, as runNightlyNow does; pay dates whose payroll is still not ready stay skipped, with why.
 */
export async function retryNightlyRunNow(
  runtime: Runtime,
  runId: string | undefined,
  options: { onProgress?: (progress: NightlyProgress) => void; pollMs?: number } & WorkerSource,
): Promise<{ retry: RunRetry; summary: NightlySummary }> {
  const id = runId ?? (await findLatestRunOfAnyDate(runtime.db))?.id;
  if (id === undefined) throw new NotFoundError('A nightly run (none has run yet)');
  const host = 'workers' in options ? options.workers : await options.startWorkers(runtime, { schedule: false });
  try {
    const retry = await retryRunPayDates(runtime.db, host.queues['pay-dates'], id);
    for (;;) {
      const progress = await readRunProgress(runtime.db, id);
      options.onProgress?.({ done: progress.total - progress.pending, total: progress.total });
      if (progress.finishedAt !== null || retry.retried.length === 0) return { retry, summary: await loadNightlySummary(runtime.db, id) };
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 200));
    }
  } finally {
    if (!('workers' in options)) await host.close();
  }
}
