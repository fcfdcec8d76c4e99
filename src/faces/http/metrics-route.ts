import type { FastifyInstance } from 'fastify';
import type { Config } from '../../platform/config/config.ts';
import type { Database } from '../../platform/db/connection.ts';
import type { RedisClient } from '../../platform/runtime/redis-connections.ts';
import { metricsAccess } from '../../platform/metrics/metrics-access.ts';
import { observeHttpRequest, queuesOnFirstScrape, renderMetrics, scrapeRegistry } from '../../platform/metrics/service-metrics.ts';
import { HttpProblem } from './problem.ts';
import { attentionGaugesSource } from '../attention/attention-service.ts';

/**
 * Times every request by its route pattern (never the URL, whose ids would make a series per
 * resource) and serves `/metrics` when METRICS_TOKEN is set. The route is operational, like `/docs`,
 * and not part of the API description.
 */
export function registerMetrics(app: FastifyInstance, deps: { config: Config; db: Database; redis: RedisClient }): void {
  app.addHook('onResponse', async (request, reply) => {
    observeHttpRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
  });

  // Depths are read with the API's own producer connection.
  const depths = queuesOnFirstScrape(deps.redis, deps.config.QUEUE_PREFIX);
  const attention = attentionGaugesSource({
    db: deps.db,
    workers: { redis: deps.redis, prefix: deps.config.QUEUE_PREFIX },
    queues: async () => Object.values(depths.queues()),
    nightlyCron: deps.config.NIGHTLY_CRON,
    timeZone: deps.config.SERVICE_TIME_ZONE,
  });
  const scrape = scrapeRegistry({ db: deps.db, queues: depths.queues, attention });
  app.addHook('onClose', () => depths.close());

  app.get('/metrics', async (request, reply) => {
    const access = metricsAccess('api', deps.config.METRICS_TOKEN, request.headers.authorization);
    // Unexposed, it answers exactly what a path with no route answers.
    if (access === 'not_exposed') throw new HttpProblem(404, 'not-found', `No route for ${request.method} ${request.url.split('?')[0]}`);
    if (access === 'unauthorized') {
      throw new HttpProblem(401, 'unauthorized', '/metrics requires Authorization: Bearer with the metrics token', {
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    const { contentType, body } = await renderMetrics(scrape);
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
}
