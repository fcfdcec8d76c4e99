import type { Command } from 'commander';
import { parseUuidOption } from './options.ts';

export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('Webhook deliveries');
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
      const deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(config.REDIS_URL), config.QUEUE_PREFIX);
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
