import type { Command } from 'commander';
import closeWithGrace from 'close-with-grace';
import { loadConfig } from '../config/config.ts';
import { ensureDatabaseExists } from '../db/admin.ts';
import { createDatabase } from '../db/connection.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { buildApp } from '../http/app.ts';
import { routeModules } from '../http/routes.ts';
import { httpAdapterFactory } from '../payroll-providers/http-adapter.ts';
import { queueReconciliationRequester } from '../reconciliation/reconciliation-requests.ts';
import { startWorkers } from '../queue/worker-host.ts';
import { loadTokenIssuer, openRuntime } from '../runtime/runtime.ts';

export async function runMigrations(): Promise<string[]> {
  const config = loadConfig();
  await ensureDatabaseExists(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL, 1);
  try {
    return await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

async function serve(): Promise<() => Promise<void>> {
  const config = loadConfig();
  const runtime = await openRuntime(config, 'api');
  const tokens = await loadTokenIssuer(config);
  const reconciliation = queueReconciliationRequester(config.REDIS_URL, config.QUEUE_PREFIX);
  const app = await buildApp({ config, db: runtime.db, redis: runtime.redis, tokens, adapterFor: httpAdapterFactory(), reconciliation }, routeModules);
  await app.listen({ host: config.HOST, port: config.PORT });
  return async () => {
    await app.close();
    await reconciliation.close();
    await runtime.close();
  };
}

async function work(): Promise<() => Promise<void>> {
  const runtime = await openRuntime(loadConfig(), 'worker');
  const host = await startWorkers(runtime);
  return async () => {
    await host.close();
    await runtime.close();
  };
}

/** Finish in-flight requests and jobs on SIGTERM/SIGINT; a second signal or 30 s forces exit. */
function closeOnSignal(closers: Array<() => Promise<void>>): void {
  closeWithGrace({ delay: 30_000 }, async ({ err }) => {
    if (err) process.stderr.write(`${err.stack ?? err}\n`);
    for (const close of closers) await close();
  });
}

export function registerServiceCommands(program: Command): void {
  program
    .command('migrate')
    .description('Create the database if missing and apply every pending migration')
    .action(async () => {
      const applied = await runMigrations();
      process.stdout.write(applied.length ? `${applied.join('\n')}\n` : 'Database is up to date\n');
    });

  program
    .command('serve')
    .description('Run the HTTP API')
    .action(async () => closeOnSignal([await serve()]));

  program
    .command('work')
    .description('Run the queue workers and the nightly scheduler')
    .action(async () => closeOnSignal([await work()]));

  program
    .command('start')
    .description('Run the API and the workers in one process (small installs)')
    .action(async () => closeOnSignal([await serve(), await work()]));
}
