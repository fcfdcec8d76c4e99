import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { withDatabase } from './command-database.ts';
import { parseUuidOption } from './options.ts';

/** As many endpoints as the console's webhooks page shows by default. */
const ENDPOINTS_LISTED = 100;

/** An endpoint as `webhooks list` prints it (listEndpointsWithState's row). */
export interface ListedEndpoint {
  id: string;
  url: string;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  failing_since: Date | null;
  biller_client_id: string;
  biller_name: string;
  pending_deliveries: number | string | bigint | null;
}

function parseEndpointLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1_000) throw new InvalidArgumentError('expected a whole number from 1 to 1000');
  return limit;
}

const stateOf = (endpoint: ListedEndpoint) => (endpoint.status === 'disabled' ? 'disabled' : endpoint.failing_since ? 'failing' : 'delivering');

/** The endpoints as JSON: each with its state in a word, failing_since as an ISO instant, the backlog as a number. */
export function endpointsJson(endpoints: readonly ListedEndpoint[]) {
  return {
    endpoints: endpoints.map((endpoint) => ({
      id: endpoint.id,
      biller_client_id: endpoint.biller_client_id,
      biller_name: endpoint.biller_name,
      url: endpoint.url,
      state: stateOf(endpoint),
      disabled_reason: endpoint.disabled_reason,
      failing_since: endpoint.failing_since ? endpoint.failing_since.toISOString() : null,
      pending_deliveries: Number(endpoint.pending_deliveries ?? 0),
    })),
  };
}

/** The list as the console's webhooks page gives it: per endpoint its biller, address, state since when, and deliveries waiting. */
export function formatEndpointList(endpoints: readonly ListedEndpoint[], options: { all: boolean; limit: number }): string {
  if (endpoints.length === 0) return options.all ? 'No webhook endpoint is registered.' : 'No webhook endpoint is failing or disabled: every one is delivering.';
  const heading = options.all
    ? 'Webhook endpoints, disabled first, then failing (the longest first), then delivering'
    : 'Webhook endpoints failing or disabled, disabled first, then the longest failing';
  const lines = [`${heading}${endpoints.length === options.limit ? ` (the first ${options.limit}; --limit shows more)` : ''}:`];
  for (const endpoint of endpoints) {
    const state = stateOf(endpoint);
    const said =
      state === 'disabled'
        ? `disabled${endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ''}`
        : state === 'failing'
          ? `failing since ${endpoint.failing_since!.toISOString()}`
          : 'delivering';
    const pending = Number(endpoint.pending_deliveries ?? 0);
    lines.push(`  ${endpoint.biller_name}  ${endpoint.url}`);
    lines.push(`    ${said}; ${pending} ${pending === 1 ? 'delivery' : 'deliveries'} waiting; endpoint ${endpoint.id}`);
  }
  return lines.join('\n');
}

export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('Webhook endpoints and deliveries');
  // The default: `deductions webhooks` alone lists them too.
  webhooks
    .command('list', { isDefault: true })
    .description(
      "Webhook endpoints failing or disabled (the console's webhooks page), disabled first, then the longest failing: biller, address, since when, deliveries waiting",
    )
    .option('--all', 'every endpoint not deleted, those delivering too')
    .option('--limit <n>', 'at most this many', parseEndpointLimit, ENDPOINTS_LISTED)
    .option('--json', 'print one JSON object: { "endpoints": [...] }')
    .action(async (options: { all?: boolean; limit: number; json?: boolean }) => {
      const { listEndpointsWithState } = await import('../webhooks/webhook-repository.ts');
      await withDatabase(async (db) => {
        const endpoints = await listEndpointsWithState(db, { troubledOnly: !options.all, limit: options.limit });
        process.stdout.write(
          options.json ? `${JSON.stringify(endpointsJson(endpoints))}\n` : `${formatEndpointList(endpoints, { all: options.all === true, limit: options.limit })}\n`,
        );
      });
    });
  webhooks
    .command('redeliver')
    .description("Send an event again to its biller's endpoints (or to one), each with a fresh retry schedule; the webhook-id stays the event id")
    .requiredOption('--event <id>', 'event id', parseUuidOption)
    .option('--endpoint <id>', 'only this endpoint (it must belong to the same biller)', parseUuidOption)
    .action(async (options: { event: string; endpoint?: string }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { producerConnection } = await import('../../platform/runtime/redis-connections.ts');
      const { queueNames } = await import('../../platform/queue/job-catalogue.ts');
      const { createQueue } = await import('../../platform/queue/queues.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { redeliverEvent, RedeliveryRefused } = await import('../webhooks/webhook-dispatch-service.ts');
      const { enqueueDeliveries } = await import('../webhooks/webhook-jobs.ts');
      const config = loadConfig();
      const runtime = await openRuntime({ ...config, LOG_LEVEL: 'warn' }, 'webhooks');
      const deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(config), config.QUEUE_PREFIX);
      try {
        const redeliveries = await redeliverEvent(runtime.db, (deliveryIds) => enqueueDeliveries(deliveries, deliveryIds, { redelivery: true }), {
          eventId: options.event,
          endpointId: options.endpoint,
        });
        const lines = redeliveries.map((r) => `  delivery ${r.deliveryId} -> endpoint ${r.endpointId} (${r.url})`);
        process.stdout.write(`Queued event ${options.event} again:\n${lines.join('\n')}\n`);
      } catch (error) {
        if (!(error instanceof RedeliveryRefused)) throw error;
        process.stderr.write(`${error.message}\n`);
        process.exitCode = 1;
      } finally {
        await deliveries.close();
        await runtime.close();
      }
    });
}
