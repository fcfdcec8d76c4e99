import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleBrowser, createConsoleUserOf, signedInAs } from '../support/console.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('console sign-in', () => {
  it('signs a person in with a session cookie and out again', async () => {
    const { browser, user } = await signedInAs(t.app, t.db, 'viewer');
    const overview = await browser.get('/console');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('Viewer Person (viewer)');
    const out = await browser.post('/console/sign-out');
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/console/sign-in');
    expect((await browser.get('/console')).statusCode).toBe(303);
    const actions = await t.db.selectFrom('audit_log').select(['action', 'actor_kind', 'actor']).where('resource_id', '=', user.id).orderBy('at').execute();
    expect(actions.map((a) => a.action)).toEqual(['console_user.created', 'console.signed_in', 'console.signed_out']);
    expect(actions[1]).toMatchObject({ actor_kind: 'console', actor: user.email });
  });
});
