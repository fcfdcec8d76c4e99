import { UnsecuredJWT, createLocalJWKSet, decodeJwt, decodeProtectedHeader, generateKeyPair, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { TokenIssuer } from '../../../src/directory/auth/token-issuer.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { createBiller, createProviderClient } from '../../support/factories.ts';

let t: TestApp;
let biller: IssuedCredentials;

beforeAll(async () => {
  t = await startTestApp();
  biller = await createBiller(t.db);
});
afterAll(async () => t.close());

const FORM = 'application/x-www-form-urlencoded';

function form(fields: Record<string, string>) {
  return new URLSearchParams(fields).toString();
}

function postToken(payload: string, headers: Record<string, string> = {}, url = '/oauth2/token') {
  return t.app.inject({ method: 'POST', url, headers: { 'content-type': FORM, ...headers }, payload });
}

function basic(id: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replaceAll('%20', '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
}

function expectOAuthError(response: Awaited<ReturnType<typeof postToken>>, status: number, error: string) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.headers['cache-control']).toBe('no-store');
  const body = response.json();
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
  expect(body).not.toHaveProperty('stack');
}

describe('POST /oauth2/token', () => {
  it('issues a bearer token for a good secret via client_secret_post', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }));
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['pragma']).toBe('no-cache');
    const body = response.json();
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(t.config.AUTH_TOKEN_TTL_SECONDS);
    expect(body.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const claims = decodeJwt(body.access_token);
    expect(claims.sub).toBe(biller.clientId);
    expect(claims.client_id).toBe(biller.clientId);
    expect(claims.iss).toBe(t.config.AUTH_ISSUER);
    expect(claims.aud).toBe(t.config.AUTH_AUDIENCE);
    expect(claims.exp! - claims.iat!).toBe(body.expires_in);
    expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(60);
    expect(decodeProtectedHeader(body.access_token).alg).toBe('ES256');
  });

  for (const url of ['/oauth2/token', '/oauth/token']) {
    it(`accepts HTTP Basic client authentication on ${url}`, async () => {
      const response = await postToken(form({ grant_type: 'client_credentials' }), { authorization: basic(biller.clientId, biller.clientSecret) }, url);
      expect(response.statusCode).toBe(200);
      expect(response.headers['cache-control']).toBe('no-store');
      const body = response.json();
      expect(body.token_type).toBe('Bearer');
      expect(decodeJwt(body.access_token).sub).toBe(biller.clientId);
    });
  }

  it('accepts client_secret_post on the /oauth/token alias', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }), {}, '/oauth/token');
    expect(response.statusCode).toBe(200);
    expect(response.json().token_type).toBe('Bearer');
  });

  it('refuses a wrong secret with 401 invalid_client', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret + 'x' }));
    expectOAuthError(response, 401, 'invalid_client');
    expect(response.json()).not.toHaveProperty('access_token');
  });

  it('refuses a wrong secret via HTTP Basic with 401 invalid_client and a Basic challenge', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials' }), {
      authorization: basic(biller.clientId, 'cs_wrong'),
    });
    expectOAuthError(response, 401, 'invalid_client');
    expect(response.headers['www-authenticate']).toMatch(/^Basic /);
  });

  it('refuses the secret of another client', async () => {
    const other = await createBiller(t.db);
    const response = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: other.clientSecret }));
    expectOAuthError(response, 401, 'invalid_client');
  });

  it('refuses an unknown client id (UUID or not) with 401 invalid_client', async () => {
    for (const clientId of [crypto.randomUUID(), 'not-a-uuid']) {
      const response = await postToken(form({ grant_type: 'client_credentials', client_id: clientId, client_secret: biller.clientSecret }));
      expectOAuthError(response, 401, 'invalid_client');
    }
  });

  it('refuses a request without any client authentication with 401 invalid_client', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId }));
    expectOAuthError(response, 401, 'invalid_client');
  });

  it('answers a malformed Basic credential (bad percent-encoding) with 401, not 500', async () => {
    const broken = `Basic ${Buffer.from(`${biller.clientId}%zz:secret%`).toString('base64')}`;
    const response = await postToken(form({ grant_type: 'client_credentials' }), { authorization: broken });
    expectOAuthError(response, 401, 'invalid_client');
  });

  it('refuses two client authentication methods at once', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }), {
      authorization: basic(biller.clientId, biller.clientSecret),
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('refuses an unsupported grant with 400 unsupported_grant_type', async () => {
    for (const grant of ['password', 'authorization_code']) {
      const response = await postToken(form({ grant_type: grant, client_id: biller.clientId, client_secret: biller.clientSecret, username: 'u', password: 'p' }));
      expectOAuthError(response, 400, 'unsupported_grant_type');
    }
  });

  it('refuses a scope outside the client with 400 invalid_scope', async () => {
    // A biller does not hold deduction_data:request.
    const response = await postToken(
      form({
        grant_type: 'client_credentials',
        client_id: biller.clientId,
        client_secret: biller.clientSecret,
        scope: 'payments:read deduction_data:request',
      }),
    );
    expectOAuthError(response, 400, 'invalid_scope');
  });

  it('refuses an unknown scope with 400 invalid_scope', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret, scope: 'admin' }));
    expectOAuthError(response, 400, 'invalid_scope');
  });

  it('grants every client scope when none is requested', async () => {
    const response = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }));
    expect(response.statusCode).toBe(200);
    const granted = String(decodeJwt(response.json().access_token).scope).split(' ');
    expect(granted.sort()).toEqual([...biller.scopes].sort());
    expect(response.json().scope.split(' ').sort()).toEqual([...biller.scopes].sort());
  });

  it('grants only the requested subset', async () => {
    const response = await postToken(
      form({
        grant_type: 'client_credentials',
        client_id: biller.clientId,
        client_secret: biller.clientSecret,
        scope: 'payments:read mandates:read',
      }),
    );
    expect(response.statusCode).toBe(200);
    expect(decodeJwt(response.json().access_token).scope).toBe('payments:read mandates:read');
    expect(response.json().scope).toBe('payments:read mandates:read');
  });

  it('grants a payroll provider its own scopes', async () => {
    const provider = await createProviderClient(t.db);
    const response = await postToken(
      form({
        grant_type: 'client_credentials',
        client_id: provider.clientId,
        client_secret: provider.clientSecret,
        scope: 'deduction_data:request',
      }),
    );
    expect(response.statusCode).toBe(200);
    expect(decodeJwt(response.json().access_token).scope).toBe('deduction_data:request');
  });

  it('refuses a JSON body with 400 invalid_request', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }),
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('refuses a text/plain body with 400 invalid_request', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'text/plain' },
      payload: form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }),
    });
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('accepts the form media type in any letter case and with a charset', async () => {
    const payload = form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret });
    for (const contentType of ['APPLICATION/X-WWW-FORM-URLENCODED', 'application/x-www-form-urlencoded; charset=utf-8']) {
      const response = await postToken(payload, { 'content-type': contentType });
      expect(response.statusCode).toBe(200);
    }
  });

  it('answers a missing grant_type with 400 invalid_request', async () => {
    const response = await postToken(form({ client_id: biller.clientId, client_secret: biller.clientSecret }));
    expectOAuthError(response, 400, 'invalid_request');
    expectOAuthError(await postToken(''), 400, 'invalid_request');
  });

  it('answers a repeated parameter with 400 invalid_request', async () => {
    const response = await postToken(`grant_type=client_credentials&grant_type=client_credentials&client_id=${biller.clientId}&client_secret=${biller.clientSecret}`);
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('refuses a disabled client', async () => {
    const disabled = await createBiller(t.db);
    await t.db.updateTable('clients').set({ disabled_at: new Date() }).where('id', '=', disabled.clientId).execute();
    const viaPost = await postToken(form({ grant_type: 'client_credentials', client_id: disabled.clientId, client_secret: disabled.clientSecret }));
    expectOAuthError(viaPost, 401, 'invalid_client');
    const viaBasic = await postToken(form({ grant_type: 'client_credentials' }), {
      authorization: basic(disabled.clientId, disabled.clientSecret),
    });
    expectOAuthError(viaBasic, 401, 'invalid_client');
  });

  it('issues distinct tokens (unique jti) on repeated requests', async () => {
    const payload = form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret });
    const [a, b] = await Promise.all([postToken(payload), postToken(payload)]);
    expect(decodeJwt(a.json().access_token).jti).not.toBe(decodeJwt(b.json().access_token).jti);
  });
});

describe('GET /.well-known/jwks.json', () => {
  it('serves a public key set that verifies an issued token', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(response.statusCode).toBe(200);
    const jwks = response.json() as JSONWebKeySet;
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) {
      expect(key).not.toHaveProperty('d');
      expect(key.kid).toBeTruthy();
    }

    const token = await postToken(form({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret, scope: 'payments:read' }));
    const { payload, protectedHeader } = await jwtVerify(token.json().access_token, createLocalJWKSet(jwks), {
      issuer: t.config.AUTH_ISSUER,
      audience: t.config.AUTH_AUDIENCE,
      algorithms: ['ES256'],
    });
    expect(payload.sub).toBe(biller.clientId);
    expect(payload.scope).toBe('payments:read');
    expect(jwks.keys.map((key) => key.kid)).toContain(protectedHeader.kid);
  });

  it('does not verify a token of another signing key', async () => {
    const stranger = await TokenIssuer.generate({
      issuer: t.config.AUTH_ISSUER,
      audience: t.config.AUTH_AUDIENCE,
      ttlSeconds: 600,
    });
    const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet;
    const forged = await stranger.issue({ clientId: biller.clientId, scopes: ['payments:read'] });
    await expect(jwtVerify(forged, createLocalJWKSet(jwks))).rejects.toThrow();
  });
});

describe('TokenIssuer.verify', () => {
  it('checks issuer, audience and expiry, not just the signature', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const options = { issuer: 'urn:a', audience: 'urn:api', ttlSeconds: 600 };
    const ours = await TokenIssuer.fromPrivateKey(privateKey, options);
    const claims = { clientId: crypto.randomUUID(), scopes: ['payments:read', 'mandates:read'] };
    const verified = await ours.verify(await ours.issue(claims));
    expect(verified).toMatchObject(claims);
    // exp (epoch seconds) = issue time + ttl: what the verified-token cache bounds its entries by.
    expect(verified.expiresAt! - Math.floor(Date.now() / 1000)).toBeGreaterThan(590);
    expect(verified.expiresAt! - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(600);

    const otherAudience = await TokenIssuer.fromPrivateKey(privateKey, { ...options, audience: 'urn:elsewhere' });
    await expect(ours.verify(await otherAudience.issue(claims))).rejects.toThrow();
    const otherIssuer = await TokenIssuer.fromPrivateKey(privateKey, { ...options, issuer: 'urn:b' });
    await expect(ours.verify(await otherIssuer.issue(claims))).rejects.toThrow();
    await expect(ours.verify(await ours.issue(claims, new Date(Date.now() - 2 * 3600_000)))).rejects.toThrow();
  });

  it('refuses an unsigned (alg none) token', async () => {
    const issuer = await TokenIssuer.generate({ issuer: 'urn:a', audience: 'urn:api', ttlSeconds: 600 });
    const unsigned = new UnsecuredJWT({ scope: 'payments:read', client_id: crypto.randomUUID() })
      .setIssuer('urn:a')
      .setAudience('urn:api')
      .setSubject(crypto.randomUUID())
      .setIssuedAt()
      .setExpirationTime('5m')
      .encode();
    await expect(issuer.verify(unsigned)).rejects.toThrow();
  });
});
