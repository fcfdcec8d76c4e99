import type { Command } from 'commander';
import closeWithGrace from 'close-with-grace';
import { loadConfig } from '../config/config.ts';
import { ensureDatabaseExists } from '../db/admin.ts';
import { createDatabase } from '../db/connection.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { buildApp, type RouteModule } from '../http/app.ts';
import { httpAdapterFactory } from '../payroll-providers/http-adapter.ts';
import { providerUrlPolicy } from '../payroll-providers/provider-url-guard.ts';
import { resolveWebhookTarget, systemResolver } from '../webhooks/webhook-target.ts';
import { secretBoxFor } from '../shared/secret-box.ts';
import { formatResealSummary, sealStoredSecrets, type ResealSummary } from './secrets-command.ts';
import { deferredReconciliationRequester, type WorkerHost } from '../workers/worker-host.ts';
import { startMetricsServer } from '../metrics/metrics-server.ts';
import { queuesOnFirstScrape, scrapeRegistry } from '../metrics/service-metrics.ts';
import type { Composition } from '../cli/composition.ts';
import { loadTokenIssuer, openRuntime, type Runtime } from '../runtime/runtime.ts';

/**
 * The schema, then the stored secrets: a migration cannot seal them (it must not import application
 * code, and the key may live in a file the application manages), so this step does, every time.
 */
export async function runMigrations(): Promise<{ applied: string[]; secrets: ResealSummary }> {
  const config = loadConfig();
  await ensureDatabaseExists(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL, 1);
  try {
    const applied = await migrateToLatest(db);
    return { applied, secrets: await sealStoredSecrets(db, secretBoxFor(config)) };
  } finally {
    await db.destroy();
  }
}

/**
 * The API. It starts and listens whatever is down: the runtime waits for PostgreSQL and Redis in the
 * background (one log line when one goes, one when it is back) and `/readyz` says which is missing.
 */
async function serve(runtime: Runtime, routes: readonly RouteModule[]): Promise<() => Promise<void>> {
  const { config } = runtime;
  const tokens = await loadTokenIssuer(config);
  const reconciliation = deferredReconciliationRequester(config.REDIS_URL, config.QUEUE_PREFIX, runtime.health);
  const adapterFor = httpAdapterFactory({
    secrets: secretBoxFor(config),
    urls: providerUrlPolicy(config.PROVIDER_ALLOW_PRIVATE_URLS, resolveWebhookTarget, systemResolver),
  });
  // The health monitor hears of every request refused for an outage, and logs the outage once.
  const app = await buildApp(
    { config, db: runtime.db, redis: runtime.redis, tokens, adapterFor, reconciliation, ...(runtime.health ? { health: runtime.health } : {}) },
    routes,
  );
  await app.listen({ host: config.HOST, port: config.PORT });
  return async () => {
    await app.close();
    await reconciliation.close();
  };
}


/**
 * The metrics port (METRICS_PORT), when configured: one per process, reading the worker host's
 * queues when the process has one, else queues on the runtime's connection.
 */
async function exposeMetrics(runtime: Runtime, host?: WorkerHost): Promise<Array<() => Promise<void>>> {
  const { config } = runtime;
  if (config.METRICS_PORT === undefined) return [];
  const ownQueues = host ? undefined : queuesOnFirstScrape(runtime.redis, config.QUEUE_PREFIX);
  const scrape = scrapeRegistry({ db: runtime.db, queues: host ? () => host.queues : ownQueues!.queues });
  const server = await startMetricsServer({ host: config.HOST, port: config.METRICS_PORT, token: config.METRICS_TOKEN, scrape });
  runtime.logger.info({ host: config.HOST, port: server.port }, 'metrics served on their own port');
  return [server.close, async () => ownQueues?.close()];
}

/** Finish in-flight requests and jobs on SIGTERM/SIGINT; a second signal or 30 s forces exit. */
function closeOnSignal(closers: Array<() => Promise<void>>): void {
  closeWithGrace({ delay: 30_000 }, async ({ err }) => {
    if (err) process.stderr.write(`${err.stack ?? err}\n`);
    for (const close of closers) await close();
  });
}

export function registerServiceCommands(program: Command, { routes, startWorkers }: Composition): void {
  program
    .command('migrate')
    .description('Create the database if missing and apply every pending migration')
    .action(async () => {
      const { applied, secrets } = await runMigrations();
      process.stdout.write(applied.length ? `${applied.join('\n')}\n` : 'Database is up to date\n');
      process.stdout.write(`${formatResealSummary(secrets)}\n`);
    });

  program
    .command('serve')
    .description('Run the HTTP API')
    .action(async () => {
      const runtime = await openRuntime(loadConfig(), 'api', { service: true });
      closeOnSignal([await serve(runtime, routes), ...(await exposeMetrics(runtime)), runtime.close]);
    });

  program
    .command('work')
    .description('Run the queue workers and the nightly scheduler')
    .action(async () => {
      const runtime = await openRuntime(loadConfig(), 'worker', { service: true });
      // The workers start at once and take jobs as soon as Redis and the database answer.
      const host = await startWorkers(runtime, { payDateConcurrency: runtime.config.PAY_DATE_CONCURRENCY });
      closeOnSignal([...(await exposeMetrics(runtime, host)), () => host.close(), runtime.close]);
    });

  program
    .command('start')
    .description('Run the API and the workers in one process (small installs)')
    .action(async () => {
      // One runtime: one pool, one Redis connection and one health monitor for both.
      const runtime = await openRuntime(loadConfig(), 'deductions', { service: true });
      const closeApi = await serve(runtime, routes);
      // The workers start at once and take jobs as soon as Redis and the database answer.
      const host = await startWorkers(runtime, { payDateConcurrency: runtime.config.PAY_DATE_CONCURRENCY });
      closeOnSignal([...(await exposeMetrics(runtime, host)), closeApi, () => host.close(), runtime.close]);
    });
}
