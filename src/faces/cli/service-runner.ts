import closeWithGrace from 'close-with-grace';
import { loadConfig } from '../../platform/config/config.ts';
import { ensureDatabaseExists } from '../../platform/db/admin.ts';
import { createDatabase } from '../../platform/db/connection.ts';
import { migrateToLatest } from '../../platform/db/migrator.ts';
import { buildApp, type RouteModule } from '../http/app.ts';
import { httpAdapterFactory } from '../../directory/payroll-providers/http-adapter.ts';
import { providerUrlPolicy } from '../../directory/payroll-providers/provider-url-guard.ts';
import { resolveWebhookTarget, systemResolver } from '../webhooks/webhook-target.ts';
import { secretBoxFor } from '../../platform/shared/secret-box.ts';
import { sealStoredSecrets, type ResealSummary } from './secrets-command.ts';
import { deferredReconciliationRequester, type WorkerHost } from '../workers/worker-host.ts';
import { startMetricsServer } from '../../platform/metrics/metrics-server.ts';
import { queuesOnFirstScrape, scrapeRegistry } from '../../platform/metrics/service-metrics.ts';
import { attentionGaugesSource } from '../attention/attention-service.ts';
import { loadTokenIssuer } from '../../directory/auth/token-issuer.ts';
import { openRuntime, type Runtime } from '../../platform/runtime/runtime.ts';
import { bringRemittancesUpToDate, remittancePolicyOf, type RefreshOutcome } from '../../settlement/cash/remittance-service.ts';

// What `migrate`, `serve`, `work` and `start` (service-commands.ts) run, loaded only when one of them does.

/**
 * The schema, then the stored secrets: a migration cannot seal them (it must not import application
 * code, and the key may live in a file the application manages), so this step does, every time. Then
 * the remittances: every live pay date locked in the refresh window has its expected remittance (the
 * lock makes it now; pay dates locked before it did get theirs here), with the configured due dates.
 */
export async function runMigrations(): Promise<{ applied: string[]; secrets: ResealSummary; remittances: RefreshOutcome }> {
  const config = loadConfig();
  await ensureDatabaseExists(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL, 1);
  try {
    const applied = await migrateToLatest(db);
    const secrets = await sealStoredSecrets(db, secretBoxFor(config));
    const remittances = await bringRemittancesUpToDate(db, await remittancePolicyOf(db, config));
    return { applied, secrets, remittances };
  } finally {
    await db.destroy();
  }
}

/** The runtime of a process that runs until it is stopped: it starts whatever is down (see openRuntime). */
export function openServiceRuntime(name: string): Promise<Runtime> {
  return openRuntime(loadConfig(), name, { service: true });
}

/**
 * The API. It starts and listens whatever is down: the runtime waits for PostgreSQL and Redis in the
 * background (one log line when one goes, one when it is back) and `/readyz` says which is missing.
 */
export async function serve(runtime: Runtime, routes: readonly RouteModule[]): Promise<() => Promise<void>> {
  const { config } = runtime;
  const tokens = await loadTokenIssuer(config);
  const reconciliation = deferredReconciliationRequester(config, config.QUEUE_PREFIX, runtime.health);
  const adapterFor = httpAdapterFactory({
    secrets: secretBoxFor(config),
    urls: providerUrlPolicy(config.PROVIDER_ALLOW_PRIVATE_URLS, resolveWebhookTarget, systemResolver),
  });
  // The health monitor hears of every request refused for an outage, and logs the outage once.
  const app = await buildApp(
    {
      config,
      db: runtime.db,
      ...(runtime.readDb ? { readDb: runtime.readDb } : {}),
      redis: runtime.redis,
      tokens,
      adapterFor,
      reconciliation,
      ...(runtime.health ? { health: runtime.health } : {}),
    },
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
export async function exposeMetrics(runtime: Runtime, host?: WorkerHost): Promise<Array<() => Promise<void>>> {
  const { config } = runtime;
  if (config.METRICS_PORT === undefined) return [];
  const ownQueues = host ? undefined : queuesOnFirstScrape(runtime.redis, config.QUEUE_PREFIX);
  const queues = host ? () => host.queues : ownQueues!.queues;
  const attention = attentionGaugesSource({
    db: runtime.db,
    workers: { redis: runtime.redis, prefix: config.QUEUE_PREFIX },
    queues: async () => Object.values(queues()),
    nightlyCron: config.NIGHTLY_CRON,
    timeZone: config.SERVICE_TIME_ZONE,
  });
  const scrape = scrapeRegistry({ db: runtime.db, queues, attention });
  const server = await startMetricsServer({ host: config.HOST, port: config.METRICS_PORT, token: config.METRICS_TOKEN, scrape });
  runtime.logger.info({ host: config.HOST, port: server.port }, 'metrics served on their own port');
  return [server.close, async () => ownQueues?.close()];
}

/** Finish in-flight requests and jobs on SIGTERM/SIGINT; a second signal or 30 s forces exit. */
export function closeOnSignal(closers: Array<() => Promise<void>>): void {
  closeWithGrace({ delay: 30_000 }, async ({ err }) => {
    if (err) process.stderr.write(`${err.stack ?? err}\n`);
    for (const close of closers) await close();
  });
}
