import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { FailureLimiter } from '../../../src/platform/shared/rate-limiter.ts';
import { clientAddressKey, clientAttackWaitSeconds } from '../../../src/directory/auth/token-throttle.ts';
import { createBiller } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

const PER_ADDRESS = 3;
const PER_CLIENT = 5;
const WINDOW_SECONDS = 60;

let t: TestApp;
let biller: IssuedCredentials;

beforeAll(async () => {
  t = await startTestApp({
    env: {
      TOKEN_FAILURES_PER_ADDRESS: String(PER_ADDRESS),
      TOKEN_FAILURES_PER_CLIENT: String(PER_CLIENT),
      TOKEN_FAILURE_WINDOW_SECONDS: String(WINDOW_SECONDS),
    },
  });
  biller = await createBiller(t.db);
});
afterAll(async () => t?.close());

/** Every test speaks from its own addresses (documentation ranges), so buckets do not mix. */
let nextHost = 1;
const freshAddress = () => `198.51.100.${nextHost++}`;

function requestToken(from: string, clientId: string, secret: string) {
  return t.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    remoteAddress: from,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
  });
}

function expectThrottled(response: Awaited<ReturnType<typeof requestToken>>) {
  expect(response.statusCode, response.body).toBe(429);
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  // One failure comes back every WINDOW / capacity seconds.
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.stringContaining(`${retryAfter} s`) });
}

describe('failed logins at the token endpoint', () => {
  it(`answers 429 with Retry-After to an address after ${PER_ADDRESS} failures, even for a right secret; other addresses go on`, async () => {
    const attacker = freshAddress();
    for (let i = 0; i < PER_ADDRESS; i++) {
      expect((await requestToken(attacker, biller.clientId, `cs_guess_${i}`)).statusCode).toBe(401);
    }
    expectThrottled(await requestToken(attacker, biller.clientId, 'cs_guess_again'));
    expectThrottled(await requestToken(attacker, biller.clientId, biller.clientSecret));
    // Unknown client ids and malformed ones count against the address too; they are what guessing sends.
    expectThrottled(await requestToken(attacker, crypto.randomUUID(), 'cs_x'));

    expect((await requestToken(freshAddress(), biller.clientId, biller.clientSecret)).statusCode).toBe(200);
  });

  it('counts unknown and malformed client ids against the address', async () => {
    const attacker = freshAddress();
    for (const clientId of [crypto.randomUUID(), 'not-a-uuid', crypto.randomUUID()]) {
      expect((await requestToken(attacker, clientId, 'cs_x')).statusCode).toBe(401);
    }
    expectThrottled(await requestToken(attacker, biller.clientId, biller.clientSecret));
  });

  it(`after ${PER_CLIENT} failures for a client id from several addresses, refuses those addresses for it; the right secret from elsewhere still works`, async () => {
    const victim = await createBiller(t.db);
    const bystander = await createBiller(t.db);
    // One failure from each of five addresses: no address reaches its own limit, the client's bucket empties.
    const attackers = Array.from({ length: PER_CLIENT }, freshAddress);
    for (const [i, attacker] of attackers.entries()) {
      expect((await requestToken(attacker, victim.clientId, `cs_guess_${i}`)).statusCode).toBe(401);
    }
    // Every address that guessed is held back for this client, even with the right secret...
    for (const attacker of attackers) expectThrottled(await requestToken(attacker, victim.clientId, 'cs_guess_more'));
    expectThrottled(await requestToken(attackers[0]!, victim.clientId, victim.clientSecret));
    // ...but not for other clients: its own bucket is not empty.
    expect((await requestToken(attackers[0]!, bystander.clientId, bystander.clientSecret)).statusCode).toBe(200);

    // The client itself, from an address that has not failed for it, gets its token, by form or by
    // Basic authentication in another letter case (the same client, the same buckets).
    expect((await requestToken(freshAddress(), victim.clientId, victim.clientSecret)).statusCode).toBe(200);
    const basic = Buffer.from(`${victim.clientId.toUpperCase()}:${victim.clientSecret}`).toString('base64');
    const viaBasic = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      payload: 'grant_type=client_credentials',
    });
    expect(viaBasic.statusCode, viaBasic.body).toBe(200);

    // A new address guessing while the client is under attack gets one guess, then waits.
    const latecomer = freshAddress();
    expect((await requestToken(latecomer, victim.clientId, 'cs_late_guess')).statusCode).toBe(401);
    expectThrottled(await requestToken(latecomer, victim.clientId, 'cs_late_guess_2'));
  });

  it('never refuses the right secret from a fresh address, however many addresses failed for the client before', async () => {
    const victim = await createBiller(t.db);
    // The finding: sixty failures from five addresses. Here each address guesses until it is held
    // back, twelve times over the per-client limit in all.
    let failures = 0;
    for (let a = 0; a < 5 * PER_CLIENT; a++) {
      const attacker = freshAddress();
      for (let guess = 0; guess < PER_ADDRESS * 2; guess++) {
        const response = await requestToken(attacker, victim.clientId, `cs_guess_${a}_${guess}`);
        if (response.statusCode === 401) failures += 1;
        else expectThrottled(response);
      }
      // Bounded: no address got more than its own limit, and after the client's bucket emptied, one.
      expectThrottled(await requestToken(attacker, victim.clientId, victim.clientSecret));
    }
    expect(failures).toBeGreaterThanOrEqual(PER_CLIENT);
    expect(failures).toBeLessThanOrEqual(PER_CLIENT + 5 * PER_CLIENT);
    for (let i = 0; i < 3; i++) {
      const ok = await requestToken(freshAddress(), victim.clientId, victim.clientSecret);
      expect(ok.statusCode, ok.body).toBe(200);
    }
  });

  it('never counts a successful token request', async () => {
    const busy = freshAddress();
    for (let i = 0; i < PER_ADDRESS * 3; i++) {
      expect((await requestToken(busy, biller.clientId, biller.clientSecret)).statusCode).toBe(200);
    }
  });

  it('keeps no bucket for a client id nobody holds', async () => {
    const unknown = crypto.randomUUID();
    await requestToken(freshAddress(), unknown, 'cs_x');
    expect(await t.redis.keys(`${t.config.QUEUE_PREFIX}:token-failures:client:*${unknown}*`)).toEqual([]);
    expect(await t.redis.keys(`${t.config.QUEUE_PREFIX}:token-failures:client-address:*${unknown}*`)).toEqual([]);
    expect(await t.redis.keys(`${t.config.QUEUE_PREFIX}:token-failures:address:*`)).not.toEqual([]);
  });

  it('documents the 429 in /openapi.json', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(document.paths['/oauth2/token'].post.responses['429']).toBeDefined();
  });
});

describe('failure buckets', () => {
  it('refill one failure every window / capacity and expire once full again', async () => {
    const limiter = new FailureLimiter(t.redis, t.config.QUEUE_PREFIX, 60);
    const bucket = [{ key: `test-bucket:${crypto.randomUUID()}`, capacity: 2 }];
    const start = 1_000_000;
    expect(await limiter.retryAfterSeconds(bucket, start)).toBe(0);
    await limiter.recordFailure(bucket, start);
    expect(await limiter.retryAfterSeconds(bucket, start)).toBe(0);
    await limiter.recordFailure(bucket, start);
    // Two per 60 s: the next failure is allowed 30 s later.
    expect(await limiter.retryAfterSeconds(bucket, start)).toBe(30);
    expect(await limiter.retryAfterSeconds(bucket, start + 10_000)).toBe(20);
    expect(await limiter.retryAfterSeconds(bucket, start + 30_000)).toBe(0);
    // Checking spends nothing.
    expect(await limiter.retryAfterSeconds(bucket, start + 30_000)).toBe(0);
    const ttl = await t.redis.pttl(`${t.config.QUEUE_PREFIX}:${bucket[0]!.key}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });
});

describe('clientAttackWaitSeconds', () => {
  it("holds back only addresses that failed for the client, and only once the client's bucket is empty", () => {
    expect(clientAttackWaitSeconds(0, 0)).toBe(0);
    expect(clientAttackWaitSeconds(0, 300)).toBe(0);
    expect(clientAttackWaitSeconds(12, 0)).toBe(0);
    expect(clientAttackWaitSeconds(12, 300)).toBe(300);
  });
});

describe('clientAddressKey', () => {
  it('counts IPv4 addresses singly and IPv6 addresses by their /64', () => {
    expect(clientAddressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientAddressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientAddressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:0db8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientAddressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
  });
});
