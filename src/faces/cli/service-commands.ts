import type { Command } from 'commander';
import type { LoadComposition } from './composition.ts';
import { formatResealSummary } from './secrets-command.ts';

// The service's own commands. What they run is in service-runner.ts, loaded by the action.

export function registerServiceCommands(program: Command, loadComposition: LoadComposition): void {
  program
    .command('migrate')
    .description('Create the database if missing and apply every pending migration')
    .action(async () => {
      const { runMigrations } = await import('./service-runner.ts');
      const { applied, secrets, remittances } = await runMigrations();
      process.stdout.write(applied.length ? `${applied.join('\n')}\n` : 'Database is up to date\n');
      process.stdout.write(`${formatResealSummary(secrets)}\n`);
      if (remittances.created > 0) process.stdout.write(`${remittances.created} expected remittance(s) made for pay dates already locked\n`);
    });

  program
    .command('serve')
    .description('Run the HTTP API')
    .action(async () => {
      const { routes } = await loadComposition();
      const { openServiceRuntime, serve, exposeMetrics, closeOnSignal } = await import('./service-runner.ts');
      const runtime = await openServiceRuntime('api');
      closeOnSignal([await serve(runtime, routes), ...(await exposeMetrics(runtime)), runtime.close]);
    });

  program
    .command('work')
    .description('Run the queue workers and the nightly scheduler')
    .action(async () => {
      const { startWorkers } = await loadComposition();
      const { openServiceRuntime, exposeMetrics, closeOnSignal } = await import('./service-runner.ts');
      const runtime = await openServiceRuntime('worker');
      // The workers start at once and take jobs as soon as Redis and the database answer.
      const host = await startWorkers(runtime, { payDateConcurrency: runtime.config.PAY_DATE_CONCURRENCY });
      closeOnSignal([...(await exposeMetrics(runtime, host)), () => host.close(), runtime.close]);
    });

  program
    .command('start')
    .description('Run the API and the workers in one process (small installs)')
    .action(async () => {
      const { routes, startWorkers } = await loadComposition();
      const { openServiceRuntime, serve, exposeMetrics, closeOnSignal } = await import('./service-runner.ts');
      // One runtime: one pool, one Redis connection and one health monitor for both.
      const runtime = await openServiceRuntime('deductions');
      const closeApi = await serve(runtime, routes);
      // The workers start at once and take jobs as soon as Redis and the database answer.
      const host = await startWorkers(runtime, { payDateConcurrency: runtime.config.PAY_DATE_CONCURRENCY });
      closeOnSignal([...(await exposeMetrics(runtime, host)), closeApi, () => host.close(), runtime.close]);
    });
}
