import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { metricsAccess } from './metrics-access.ts';
import { renderMetrics } from './service-metrics.ts';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The metrics port (METRICS_PORT): `GET /metrics` and nothing else, so a worker process, which has
 * no API, is scraped too, and the API's port need not expose it.
 */
export async function startMetricsServer(options: { host: string; port: number; token: string | undefined; scrape: Registry }): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    if (metricsAccess('metrics', options.token, request.headers.authorization) !== 'allowed') {
      response.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer' }).end('Unauthorized\n');
      return;
    }
    renderMetrics(options.scrape).then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(request.method === 'HEAD' ? undefined : body),
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics could not be collected\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
