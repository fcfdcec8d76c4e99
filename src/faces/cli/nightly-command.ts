import { userInfo } from 'node:os';
import type { Command } from 'commander';
import type { NightlySummary } from '../../cycle/nightly/nightly-service.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import type { LoadComposition } from './composition.ts';
import { parseDateOption, parseUuidOption } from './options.ts';

function durationOf(summary: NightlySummary): string {
  if (summary.finishedAt === null) return 'still running';
  return `${((Date.parse(summary.finishedAt) - Date.parse(summary.startedAt)) / 1000).toFixed(1)} s`;
}

/** The run as the database recorded it: what this run locked, what it found locked, what failed. */
export function formatNightlySummary(summary: NightlySummary): string {
  const rows: Array<[string, string]> = [
    ['Run date', summary.runDate],
    ['Run', `${summary.runId} (${summary.trigger}${summary.triggeredBy ? ` by ${summary.triggeredBy}` : ''})`],
    ['Started', summary.startedAt],
    ['Duration', durationOf(summary)],
    ['Payroll pay dates due', String(summary.pairs)],
    ['Payrolls locked', String(summary.payrollsLocked)],
    ['Already locked (no-op)', String(summary.alreadyLocked)],
    ['Employees', String(summary.employees)],
    ['Payments instructed', String(summary.paymentsInstructed)],
    ...Object.entries(summary.totalsByCurrency).map(([currency, total]) => [`Total ${currency}`, formatMoney(total, currency)] as [string, string]),
    ['Failures', String(summary.failures.length)],
    ['Skipped (payroll not ready)', String(summary.skipped.length)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`);
  const payrollOf = (entry: { payrollId: string; payroll: string | null }) => (entry.payroll ? `${entry.payroll} (payroll ${entry.payrollId})` : `payroll ${entry.payrollId}`);
  for (const failure of summary.failures) lines.push(`  ! ${payrollOf(failure)}, pay date ${failure.payDate}: ${failure.reason}`);
  for (const skipped of summary.skipped) lines.push(`  - ${payrollOf(skipped)}, pay date ${skipped.payDate} skipped, ${skipped.reason}`);
  if (summary.skipped.length > 0) lines.push('  Skipped pay dates are locked as soon as their payroll is ready (the worker retries them), or by deductions nightly retry.');
  return lines.join('\n');
}

function progressBar(SingleBar: typeof import('cli-progress').SingleBar, preset: import('cli-progress').Preset) {
  const bar = new SingleBar({ format: 'Pay dates {bar} {value}/{total} | {percentage}% | {duration}s', hideCursor: true }, preset);
  let started = false;
  return {
    update({ done, total }: { done: number; total: number }) {
      if (!started) {
        bar.start(total, done);
        started = true;
      }
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}

export function registerNightlyCommand(program: Command, loadComposition: LoadComposition): void {
  const nightly = program
    .command('nightly')
    .description('Run the nightly pay-date cycle for a date now, show progress, wait, and print a summary')
    .option('--date <date>', 'run date (YYYY-MM-DD); default: today in the service time zone', parseDateOption)
    .action(async (options: { date?: string }) => {
      const { startWorkers } = await loadComposition();
      const { SingleBar, Presets } = await import('cli-progress');
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { serviceToday } = await import('../../directory/calendars/lock-date.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { runNightlyNow } = await import('../workers/nightly-runner.ts');
      const config = loadConfig();
      const runtime = await openRuntime({ ...config, LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL }, 'nightly');
      const runDate = options.date ?? serviceToday(new Date(), config.SERVICE_TIME_ZONE);
      const bar = new SingleBar({ format: 'Pay dates {bar} {value}/{total} | {percentage}% | {duration}s', hideCursor: true }, Presets.shades_classic);
      let started = false;
      try {
        const summary = await runNightlyNow(runtime, runDate, {
          startWorkers,
          trigger: { kind: 'manual', by: `cli:${userInfo().username}` },
          onProgress: ({ done, total }) => {
            if (!started) {
              bar.start(total, done);
              started = true;
            }
            bar.update(done);
          },
        });
        if (started) bar.stop();
        process.stdout.write(`\nNightly run ${runDate}\n${formatNightlySummary(summary)}\n`);
        if (summary.failures.length > 0) process.exitCode = 1;
      } finally {
        if (started) bar.stop();
        await runtime.close();
      }
    });

  nightly
    .command('retry')
    .description(
      'Lock again, now, the pay dates a nightly run skipped (payroll not ready) or failed, in that run, and wait; those whose payroll is still not ready stay skipped, saying why',
    )
    .option('--run <id>', 'the nightly run (default: the latest)', parseUuidOption)
    .action(async (options: { run?: string }) => {
      const { startWorkers } = await loadComposition();
      const { SingleBar, Presets } = await import('cli-progress');
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { retryNightlyRunNow } = await import('../workers/nightly-runner.ts');
      const config = loadConfig();
      const runtime = await openRuntime({ ...config, LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL }, 'nightly');
      const bar = progressBar(SingleBar, Presets.shades_classic);
      try {
        const { retry, summary } = await retryNightlyRunNow(runtime, options.run, { startWorkers, onProgress: (progress) => bar.update(progress) });
        bar.stop();
        if (retry.busyWith !== null) {
          process.stderr.write(`Another run of ${summary.runDate} is going (${retry.busyWith}); nothing was retried. Try again once it has finished.\n`);
          process.exitCode = 1;
          return;
        }
        const still = retry.stillNotReady.length;
        process.stdout.write(
          `\nRetried ${retry.retried.length} pay date${retry.retried.length === 1 ? '' : 's'} of nightly run ${summary.runId}${still > 0 ? `; ${still} still not ready` : ''}\n${formatNightlySummary(summary)}\n`,
        );
        if (summary.failures.length > 0) process.exitCode = 1;
      } finally {
        bar.stop();
        await runtime.close();
      }
    });
}
