import { createHash, timingSafeEqual } from 'node:crypto';

export type MetricsAccess = 'allowed' | 'unauthorized' | 'not_exposed';

/**
 * Who may read /metrics. On the API port: nobody unless a token is configured (so nothing leaks by
 * default), then only its bearer. On the metrics port, which exists only when configured: anyone
 * who reaches it, unless a token is configured. Tokens are compared as digests in constant time,
 * so neither their content nor their length shows in the time an answer takes.
 */
export function metricsAccess(port: 'api' | 'metrics', configuredToken: string | undefined, authorization: string | undefined): MetricsAccess {
  if (configuredToken === undefined) return port === 'api' ? 'not_exposed' : 'allowed';
  const match = /^Bearer ([^\s]+)$/i.exec(authorization ?? '');
  if (!match) return 'unauthorized';
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]!), digest(configuredToken)) ? 'allowed' : 'unauthorized';
}
