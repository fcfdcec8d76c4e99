import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { newBiller, pause, recordEvent, until } from '../../faces/webhooks/webhook-test-kit.ts';
import { createPrivateRedis, type PrivateRedis } from '../../support/private-servers.ts';
import { linesWith, startService, type ServiceProcess } from './service-process.ts';

let t: TestApp;
let worker: ServiceProcess | undefined;
let redis: PrivateRedis | undefined;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await worker?.kill('SIGKILL');
  await redis?.destroy();
  await t?.close();
});

const redisDown = (lines: ServiceProcess['lines']) => linesWith(lines, { event: 'dependency_down' }).filter((line) => line.dependency === 'redis');
const redisUp = (lines: ServiceProcess['lines']) => linesWith(lines, { event: 'dependency_up' }).filter((line) => line.dependency === 'redis');
/** What an operator must never see: ioredis's unhandled-error dump, or any stack trace. */
const noiseIn = (stderr: string[]) => stderr.join('').match(/\[ioredis\] Unhandled error event|^\s+at /m);

describe('a worker started while Redis is down', () => {
  it('waits with one line, works once Redis is there (one line), says once when it goes again, and recovers when it comes back empty', async () => {
    // Its port is chosen, nothing listens on it yet.
    redis = await createPrivateRedis();
    worker = startService('work', { DATABASE_URL: t.database.url, REDIS_URL: redis.url, QUEUE_PREFIX: t.config.QUEUE_PREFIX });

    const down = await worker.waitForLine((line) => line.event === 'dependency_down' && line.dependency === 'redis');
    expect(down.msg).toMatch(/^redis unavailable/);
    expect(String(down.error)).toContain('ECONNREFUSED');
    // Several reconnect attempts of every connection later: still the one line, and no noise.
    await pause(3_000);
    expect(worker.child.exitCode).toBeNull();
    expect(redisDown(worker.lines)).toHaveLength(1);
    expect(noiseIn(worker.stderr)).toBeNull();

    await redis.start();
    const up = await worker.waitForLine((line) => line.event === 'dependency_up' && line.dependency === 'redis');
    expect(up.msg).toBe('redis available again');

    // It works: the dispatcher's schedule, written once Redis answered, dispatches a new event.
    const biller = await newBiller(t);
    const eventId = await recordEvent(t.db, biller.clientId);
    await until(
      () => t.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow(),
      (event) => event.dispatched_at !== null,
      20_000,
    );

    await redis.stop();
    await worker.waitForLine(() => redisDown(worker!.lines).length === 2);
    await pause(3_000);
    expect(redisDown(worker.lines)).toHaveLength(2);
    expect(redisUp(worker.lines)).toHaveLength(1);
    expect(noiseIn(worker.stderr)).toBeNull();
    expect(worker.stderr.join('')).toBe('');

    // Redis comes back empty (no persistence): the worker notices the loss, re-creates its
    // schedules and dispatches again.
    await redis.start();
    await worker.waitForLine(() => redisUp(worker!.lines).length === 2);
    await worker.waitForLine((line) => line.event === 'redis_data_lost');
    await worker.waitForLine((line) => line.event === 'schedulers_recreated');
    const later = await recordEvent(t.db, biller.clientId);
    await until(
      () => t.db.selectFrom('events').select('dispatched_at').where('id', '=', later).executeTakeFirstOrThrow(),
      (event) => event.dispatched_at !== null,
      20_000,
    );

    // And it stops cleanly on SIGTERM, with Redis gone as with Redis there.
    await redis.stop();
    await worker.waitForLine(() => redisDown(worker!.lines).length === 3);
    expect(await worker.kill('SIGTERM')).toBe(0);
    expect(worker.stderr.join('')).toBe('');
  }, 60_000);
});
