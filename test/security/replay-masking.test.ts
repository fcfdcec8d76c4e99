import { describe, expect, it } from 'vitest';
import { maskCredential, replayableBody } from '../../src/platform/idempotency/idempotency-service.ts';

// What an idempotency key keeps for 30 days: the response, minus the credentials it showed once.

describe('replayableBody', () => {
  it('masks every credential field, however deep, keeping its kind recognisable', () => {
    const body = JSON.stringify({
      webhook_endpoint: { id: 'e1', secret: 'whsec_abcdefghijklmnopqrstuvwxyz012345678901234=', url: 'https://x' },
      client: { id: 'c1', api_keys: [{ key_prefix: 'ak_1234567' }] },
      client_secret: 'cs_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG',
      api_key: 'ak_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG',
      nested: [{ access_token: 'eyJhbGciOi.x.y' }],
    });
    expect(JSON.parse(replayableBody(body))).toEqual({
      webhook_endpoint: { id: 'e1', secret: 'whsec_********', url: 'https://x' },
      client: { id: 'c1', api_keys: [{ key_prefix: 'ak_1234567' }] },
      client_secret: 'cs_********',
      api_key: 'ak_********',
      nested: [{ access_token: '********' }],
    });
  });

  it('redacts credentials from the request URL a stored problem names as its instance', () => {
    const problem = JSON.stringify({ type: 'x', status: 422, instance: '/payments?api_key=ak_secret&limit=5' });
    expect(JSON.parse(replayableBody(problem)).instance).toBe('/payments?api_key=[redacted]&limit=5');
  });

  it('keeps every other body byte for byte', () => {
    for (const body of ['', '{"payment":{"id":"p1","amount":100}}', '{ "spaced" : true }', 'not json', '{"secretary":"Ann","description":"the secret is out"}']) {
      expect(replayableBody(body)).toBe(body);
    }
  });

  it('masks to the prefix only', () => {
    expect(maskCredential('whsec_Zm9v')).toBe('whsec_********');
    expect(maskCredential('plain')).toBe('********');
  });
});
