import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { pause } from '../../faces/webhooks/webhook-test-kit.ts';
import { createPrivateRedis, freePort, type PrivateRedis } from '../../support/private-servers.ts';
import { linesWith, startService, type ServiceProcess } from './service-process.ts';

let t: TestApp;
const dir = mkdtempSync(join(tmpdir(), 'serve-deps-'));
const processes: ServiceProcess[] = [];
let redis: PrivateRedis | undefined;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  for (const service of processes) await service.kill('SIGKILL');
  await redis?.destroy();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const downLines = (service: ServiceProcess, dependency: string) => linesWith(service.lines, { event: 'dependency_down' }).filter((line) => line.dependency === dependency);
const upLines = (service: ServiceProcess, dependency: string) => linesWith(service.lines, { event: 'dependency_up' }).filter((line) => line.dependency === dependency);
const noiseIn = (stderr: string[]) => stderr.join('').match(/\[ioredis\] Unhandled error event|^\s+at /m);

async function start(command: 'serve' | 'start', env: Record<string, string>) {
  const port = await freePort();
  const service = startService(command, {
    HOST: '127.0.0.1',
    PORT: String(port),
    AUTH_SIGNING_KEY_FILE: join(dir, `${command}-key.pem`),
    QUEUE_PREFIX: t.config.QUEUE_PREFIX,
    ...env,
  });
  processes.push(service);
  await service.waitForLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));
  return { service, url: `http://127.0.0.1:${port}` };
}

describe('serve with its dependencies down', () => {
  it('listens anyway, says once that each is down, reports them in /readyz, and says once when Redis is back', async () => {
    redis = await createPrivateRedis();
    const postgresPort = await freePort();
    const { service, url } = await start('serve', {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${postgresPort}/deductions`,
      REDIS_URL: redis.url,
    });

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // (What /readyz says of each dependency is the API's to define; here only that it is not ready.)
    expect((await fetch(`${url}/readyz`)).status).toBe(503);

    await service.waitForLine(() => downLines(service, 'postgres').length === 1 && downLines(service, 'redis').length === 1);
    await pause(3_000);
    expect(downLines(service, 'postgres')).toHaveLength(1);
    expect(downLines(service, 'redis')).toHaveLength(1);
    expect(String(downLines(service, 'postgres')[0]!.error)).toContain('ECONNREFUSED');
    expect(noiseIn(service.stderr)).toBeNull();

    await redis.start();
    await service.waitForLine(() => upLines(service, 'redis').length === 1);
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    expect(downLines(service, 'postgres')).toHaveLength(1);
    expect(upLines(service, 'postgres')).toHaveLength(0);
    expect(service.stderr.join('')).toBe('');

    expect(await service.kill('SIGTERM')).toBe(0);
    await redis.destroy();
    redis = undefined;
  }, 40_000);

  it('start (API and workers in one process) listens with Redis down and says so once', async () => {
    const { service, url } = await start('start', { DATABASE_URL: t.database.url, REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await service.waitForLine(() => downLines(service, 'redis').length === 1);
    await pause(2_000);
    expect(downLines(service, 'redis')).toHaveLength(1);
    expect(downLines(service, 'postgres')).toHaveLength(0);
    expect(service.stderr.join('')).toBe('');
    expect(await service.kill('SIGTERM')).toBe(0);
  }, 30_000);
});
