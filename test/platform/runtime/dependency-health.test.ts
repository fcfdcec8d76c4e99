import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { outageReporter } from '../../../src/faces/http/dependency-errors.ts';
import { isConnectionError, monitorDependencies } from '../../../src/platform/runtime/dependency-health.ts';
import { until } from '../../faces/webhooks/webhook-test-kit.ts';

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
      await until(
        () => health.isUp('redis') && health.isUp('postgres'),
        (up) => up,
      );
      expect(lines).toEqual([]);

      redisAnswers = false;
      for (let i = 0; i < 50; i++) health.noteFailure('redis', refused());
      await until(
        () => health.status('redis'),
        (status) => status === 'down',
      );
      const probesWhileDown = probes;
      // Retries keep probing (every 10-20 ms here) and errors keep coming: no more lines.
      await until(
        () => probes,
        (count) => count >= probesWhileDown + 5,
      );
      for (let i = 0; i < 50; i++) health.noteFailure('redis', refused());
      expect(health.report().redis).toMatchObject({ status: 'down', error: 'connect ECONNREFUSED 127.0.0.1:6399' });

      redisAnswers = true;
      await until(
        () => health.isUp('redis'),
        (up) => up,
      );
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

describe('requests refused for an outage (noteRefusal)', () => {
  it('logs the outage once when the first refusals come, however many follow, and counts them in the line that says it is back', async () => {
    const { logger, lines } = capture();
    let answers = true;
    let probes = 0;
    const health = monitorDependencies(
      logger,
      {
        postgres: async () => {
          probes += 1;
          if (!answers) throw refused();
        },
        redis: async () => {},
      },
      // The periodic look is an hour away: only the refusals can make the monitor notice.
      { upIntervalMs: 3_600_000, downIntervalMs: [10, 20], refusalProbeGapMs: 0 },
    );
    try {
      await until(
        () => health.isUp('postgres'),
        (up) => up,
      );
      answers = false;
      for (let i = 0; i < 200; i++) health.noteRefusal('postgres', refused());
      await until(
        () => health.status('postgres'),
        (status) => status === 'down',
      );
      for (let i = 0; i < 300; i++) health.noteRefusal('postgres', refused());
      const probesWhileDown = probes;
      await until(
        () => probes,
        (count) => count >= probesWhileDown + 3,
      );
      answers = true;
      await until(
        () => health.isUp('postgres'),
        (up) => up,
      );

      expect(lines.map((line) => [line.level, line.dependency, line.event])).toEqual([
        [40, 'postgres', 'dependency_down'],
        [30, 'postgres', 'dependency_up'],
      ]);
      expect(lines[1]).toMatchObject({ msg: 'postgres available again', refusedRequests: 500 });
    } finally {
      health.close();
    }
  });

  it('probes at most once per gap while the dependency answers, and reports refusals it cannot explain in one line per interval', async () => {
    const { logger, lines } = capture();
    let probes = 0;
    const health = monitorDependencies(
      logger,
      {
        postgres: async () => {
          probes += 1;
        },
        redis: async () => {},
      },
      { upIntervalMs: 3_600_000, refusalProbeGapMs: 50, refusalReportIntervalMs: 60_000 },
    );
    try {
      await until(
        () => health.isUp('postgres'),
        (up) => up,
      );
      const before = probes;
      // A pool out of connections refuses requests while the server answers: a storm of refusals...
      const started = Date.now();
      while (Date.now() - started < 300) {
        health.noteRefusal('postgres', new Error('timeout exceeded when trying to connect'));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      // ...starts a probe every 50 ms at most, not one per refusal,
      expect(probes - before).toBeGreaterThanOrEqual(2);
      expect(probes - before).toBeLessThanOrEqual(300 / 50 + 2);
      // ...and is one line (the next within the minute would wait), never an outage.
      expect(lines.map((line) => line.event)).toEqual(['dependency_refusals']);
      expect(lines[0]).toMatchObject({ level: 40, dependency: 'postgres', refusedRequests: expect.any(Number) });
      expect(health.isUp('postgres')).toBe(true);
    } finally {
      health.close();
    }
  });

  it('probes quickly while a dependency is down, by default', async () => {
    const { logger } = capture();
    let answers = false;
    const downAt: number[] = [];
    const health = monitorDependencies(logger, {
      postgres: async () => {
        downAt.push(Date.now());
        if (!answers) throw refused();
      },
      redis: async () => {},
    });
    try {
      await until(
        () => downAt.length,
        (count) => count >= 5,
        10_000,
      );
      const gaps = downAt.slice(1).map((at, i) => at - downAt[i]!);
      // Back off from a quarter of a second to a second, never the old 5 s.
      expect(Math.max(...gaps)).toBeLessThan(1_500);
      answers = true;
      const back = Date.now();
      await until(
        () => health.isUp('postgres'),
        (up) => up,
        3_000,
      );
      expect(Date.now() - back).toBeLessThan(1_500);
    } finally {
      health.close();
    }
  });
});

describe('outageReporter', () => {
  const refusedError = new Error('connect ECONNREFUSED 127.0.0.1:5432');

  it('with a monitor, hands every refusal to it and logs nothing above debug', () => {
    const { logger, lines } = capture();
    const noted: string[] = [];
    const reporter = outageReporter({ noteRefusal: (dependency) => void noted.push(dependency) });
    for (let i = 0; i < 1_000; i++) reporter.refused('postgres', refusedError, logger);
    expect(noted).toHaveLength(1_000);
    expect(lines).toEqual([]);
  });

  it('without one, logs a warning per dependency at most once per interval, counting the refusals', () => {
    const { logger, lines } = capture();
    let now = 0;
    const reporter = outageReporter(undefined, { intervalMs: 10_000, now: () => now });
    for (let i = 0; i < 1_000; i++) reporter.refused('postgres', refusedError, logger);
    reporter.refused('redis', new Error('Connection is closed.'), logger);
    now = 10_000;
    reporter.refused('postgres', refusedError, logger);
    expect(lines.map((line) => [line.level, line.dependency, line.msg, line.refusedRequests])).toEqual([
      [40, 'postgres', 'postgres unavailable; answered 503', 1],
      [40, 'redis', 'redis unavailable; answered 503', 1],
      [40, 'postgres', 'postgres unavailable; answered 503', 1_000],
    ]);
    expect(lines.every((line) => !('err' in line))).toBe(true);
  });
});
