import { describe, expect, it } from 'vitest';
import { metricsAccess, type MetricsAccess } from '../../../src/platform/metrics/metrics-access.ts';

const token = 'metrics-token-0123456789';

describe('metricsAccess', () => {
  const cases: Array<[port: 'api' | 'metrics', configured: string | undefined, authorization: string | undefined, expected: MetricsAccess]> = [
    ['api', undefined, undefined, 'not_exposed'],
    ['api', undefined, `Bearer ${token}`, 'not_exposed'],
    ['metrics', undefined, undefined, 'allowed'],
    ['metrics', undefined, 'Bearer anything', 'allowed'],
    ['api', token, undefined, 'unauthorized'],
    ['metrics', token, undefined, 'unauthorized'],
    ['api', token, '', 'unauthorized'],
    ['api', token, `Bearer ${token}`, 'allowed'],
    ['metrics', token, `Bearer ${token}`, 'allowed'],
    ['api', token, `bearer ${token}`, 'allowed'],
    ['api', token, `Bearer ${token}x`, 'unauthorized'],
    ['api', token, `Bearer ${token.slice(0, -1)}`, 'unauthorized'],
    ['api', token, `Basic ${token}`, 'unauthorized'],
    ['api', token, token, 'unauthorized'],
    ['api', token, `Bearer  ${token}`, 'unauthorized'],
    ['api', token, `Bearer ${token} extra`, 'unauthorized'],
  ];
  it.each(cases)('on the %s port, token %s, Authorization %s: %s', (port, configured, authorization, expected) => {
    expect(metricsAccess(port, configured, authorization)).toBe(expected);
  });
});
