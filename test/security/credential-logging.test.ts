import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/directory/auth/clients-service.ts';
import { redactUrlCredentials, loggerOptions } from '../../src/platform/shared/logger.ts';
import { createBiller } from '../support/factories.ts';
import { fetchToken, startTestApp, type TestApp } from '../support/test-app.ts';

// Clients sometimes put credentials in a URL (`?client_secret=`, `?api_key=`). The request line is
// logged for every request, so the logger must drop them, and the headers and bodies that carry them.

const lines: string[] = [];
let t: TestApp;
let biller: IssuedCredentials;

beforeAll(async () => {
  // The app's own logger options (what `serve` uses), at info so every request is logged.
  const logger = pino(
    loggerOptions({ LOG_LEVEL: 'info' }),
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    }),
  );
  t = await startTestApp({ logger });
  biller = await createBiller(t.db);
});
afterAll(async () => t?.close());

describe('request logs', () => {
  it('never hold a client secret, API key or token sent in the query string, a header or a form body', async () => {
    const token = await fetchToken(t.app, biller);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }).toString();
    await t.app.inject({
      method: 'POST',
      url: `/oauth2/token?client_id=${biller.clientId}&client_secret=${encodeURIComponent(biller.clientSecret)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form,
    });
    await t.app.inject({
      method: 'GET',
      url: `/payments?api_key=${biller.apiKey}&access_token=${token}&limit=5`,
      headers: { authorization: `Bearer ${token}`, 'x-api-key': biller.apiKey },
    });
    await t.app.inject({ method: 'GET', url: `/no-such-route?client_secret=${biller.clientSecret}` });
    await t.app.inject({ method: 'GET', url: `/payments?API_KEY=${biller.apiKey}`, headers: { 'x-api-key': biller.apiKey } });

    const logged = lines.join('\n');
    // The requests were logged, with what is safe to keep.
    expect(logged).toContain(`/oauth2/token?client_id=${biller.clientId}&client_secret=[redacted]`);
    expect(logged).toContain('/payments?api_key=[redacted]&access_token=[redacted]&limit=5');
    expect(logged).toContain('/no-such-route?client_secret=[redacted]');
    expect(logged).toContain('/payments?API_KEY=[redacted]');
    for (const credential of [biller.clientSecret, encodeURIComponent(biller.clientSecret), biller.apiKey, token]) {
      expect(logged).not.toContain(credential);
    }
  });

  it('never hold credentials logged as fields of an object', () => {
    const captured: string[] = [];
    const logger = pino(loggerOptions({ LOG_LEVEL: 'info' }), new Writable({ write: (chunk, _e, done) => (captured.push(String(chunk)), done()) }));
    logger.info(
      { client_secret: 'S1', api_key: 'S2', provider: { client_secret: 'S3', api_key: 'S4', access_token: 'S5', headers: { authorization: 'S6', 'x-api-key': 'S7' } } },
      'calling',
    );
    expect(captured.join('')).not.toMatch(/S[1-7]/);
  });
});

describe('redactUrlCredentials', () => {
  it('redacts credential parameters whatever their case or encoding, and keeps everything else byte for byte', () => {
    expect(redactUrlCredentials('/payments')).toBe('/payments');
    expect(redactUrlCredentials('/payments?limit=5&after=abc%3D')).toBe('/payments?limit=5&after=abc%3D');
    expect(redactUrlCredentials('/x?Client_Secret=a&b=2&client%5Fsecret=c&token=d#frag')).toBe(
      '/x?Client_Secret=[redacted]&b=2&client%5Fsecret=[redacted]&token=[redacted]#frag',
    );
    expect(redactUrlCredentials('/x?api_key=a=b&password=p&secret=s&x-api-key=k')).toBe('/x?api_key=[redacted]&password=[redacted]&secret=[redacted]&x-api-key=[redacted]');
    expect(redactUrlCredentials('/x?%zz=1&api_key')).toBe('/x?%zz=1&api_key');
  });
});
