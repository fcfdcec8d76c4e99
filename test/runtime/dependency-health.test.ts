import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { isConnectionError, monitorDependencies } from '../../src/runtime/dependency-health.ts';
import { until } from '../webhooks/webhook-test-kit.ts';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { logger, lines };
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6399'), { code: 'ECONNREFUSED' });

describe('isConnectionError', () => {
  it('tells "could not talk to it" from "it said no"', () => {
    expect(isConnectionError(refused())).toBe(true);
    expect(isConnectionError(new AggregateError([refused(), refused()], ''))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isConnectionError(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError('connect ECONNREFUSED 127.0.0.1:5432')).toBe(true);
    expect(isConnectionError(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }))).toBe(false);
    expect(isConnectionError(new Error('no active collection account for GBP'))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});

describe('monitorDependencies', () => {
  it('logs one line when a dependency goes and one when it is back, however many failures are reported between', async () => {
    const { logger, lines } = capture();
    let redisAnswers = true;
    let probes = 0;
    const health = monitorDependencies(
      logger,
      {
        postgres: async () => {},
        redis: async () => {
          probes += 1;
          if (!redisAnswers) throw refused();
        },
      },
      { upIntervalMs: 60_000, downIntervalMs: [10, 20] },
    );
    try {
      await until(() => health.isUp('redis') && health.isUp('postgres'), (up) => up);
      expect(lines).toEqual([]);

      redisAnswers = false;
      for (let i = 0; i < 50; i++) health.noteFailure('redis', refused());
      await until(() => health.status('redis'), (status) => status === 'down');
      const probesWhileDown = probes;
      // Retries keep probing (every 10-20 ms here) and errors keep coming: no more lines.
      await until(() => probes, (count) => count >= probesWhileDown + 5);
      for (let i = 0; i < 50; i++) health.noteFailure('redis', refused());
      expect(health.report().redis).toMatchObject({ status: 'down', error: 'connect ECONNREFUSED 127.0.0.1:6399' });

      redisAnswers = true;
      await until(() => health.isUp('redis'), (up) => up);
      // An error that is not about the connection (a command the server refused) is no outage.
      health.noteFailure('redis', new Error('ERR unknown command'));
      expect(health.isUp('redis')).toBe(true);

      expect(lines.map((line) => [line.level, line.dependency, line.event])).toEqual([
        [40, 'redis', 'dependency_down'],
        [30, 'redis', 'dependency_up'],
      ]);
      expect(lines[1]!.msg).toBe('redis available again');
      expect(health.report().postgres.status).toBe('up');
    } finally {
      health.close();
    }
  });
});
