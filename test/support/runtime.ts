import pino from 'pino';
import type { Runtime } from '../../src/platform/runtime/runtime.ts';
import type { TestApp } from './test-app.ts';

/** The worker side's Runtime over a test app's private database and Redis prefix. */
export function runtimeOf(t: TestApp): Runtime {
  return { config: t.config, db: t.db, redis: t.redis, logger: pino({ level: 'silent' }), close: async () => {} };
}
