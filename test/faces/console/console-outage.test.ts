import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DependencyHealth } from '../../../src/platform/runtime/dependency-health.ts';
import { SESSION_COOKIE } from '../../../src/faces/console/console-plugin.ts';
import { freePort } from '../../support/private-servers.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// A console page refused because PostgreSQL is gone tells the process's health monitor, as an API
// request does: the monitor then logs the outage once, and the page logs nothing of its own.

let t: TestApp;
const refusals: string[] = [];
beforeAll(async () => {
  // Nothing listens there: every query fails to connect.
  const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`;
  const health = { noteRefusal: (dependency: string) => void refusals.push(dependency) } as unknown as DependencyHealth;
  t = await startTestApp({ databaseUrl: nowhere, health });
});
afterAll(async () => t?.close());

describe('a console page during a PostgreSQL outage', () => {
  it('answers 503 and reports the refusal to the health monitor', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/console', cookies: { [SESSION_COOKIE]: 'a'.repeat(43) } });
    expect(page.statusCode).toBe(503);
    expect(refusals).toEqual(['postgres']);
  });
});
