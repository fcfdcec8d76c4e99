import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Executor } from '../../../platform/db/connection.ts';
import { findClientByApiKeyHash, findClientById } from '../../../directory/auth/clients-repository.ts';
import type { RateLimiter } from '../../../platform/shared/rate-limiter.ts';
import { CLIENT_CACHE_TTL_MS, tokenStillHonoured } from '../../../directory/auth/revocation.ts';
import { hashSecret } from '../../../directory/auth/secrets.ts';
import type { TokenIssuer, VerifiedClaims } from '../../../directory/auth/token-issuer.ts';
import type { Client } from '../../../platform/db/tables.ts';
import type { Caller } from '../../../platform/shared/caller.ts';
import { DependencyUnavailable } from '../../../platform/shared/domain-errors.ts';
import { HttpProblem } from '../problem.ts';

/** A verified token's claims never change; only the client's state does, and that is re-read sooner. */
const TOKEN_CACHE_TTL_MS = 30_000;
/** Verified tokens kept; a client sends the same token for its whole lifetime, so few are live. */
const TOKEN_CACHE_SIZE = 10_000;

function unauthorized(detail: string, tokenError = true): HttpProblem {
  return new HttpProblem(401, 'unauthorized', detail, {
    headers: {
      'www-authenticate': tokenError ? `Bearer error="invalid_token", error_description="${detail.replaceAll('"', "'")}"` : 'Bearer',
    },
  });
}

/**
 * Resolves the bearer token and the x-api-key to one client, checks the route's scope and role,
 * then takes a rate-limit token for that client, all before the request body is read. Clients are
 * cached briefly: every request would otherwise cost two extra queries, and a disabled client, a
 * rotated secret's tokens and a revoked API key stop within the cache lifetime (CLIENT_CACHE_TTL_MS).
 * Verified tokens are cached too (an ES256 verification costs more CPU than the rest of the
 * authentication): the token string is the key, so a changed byte is a miss and gets verified,
 * and an entry never outlives the token's exp.
 */
export const authenticatePlugin = fp(
  async (app: FastifyInstance, options: { db: Executor; tokens: TokenIssuer; rateLimiter: RateLimiter }) => {
    const cache = new Map<string, { client: Client | undefined; expires: number }>();

    async function cached(key: string, load: () => Promise<Client | undefined>): Promise<Client | undefined> {
      const hit = cache.get(key);
      if (hit && hit.expires > Date.now()) return hit.client;
      const client = await load();
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { client, expires: Date.now() + CLIENT_CACHE_TTL_MS });
      return client;
    }

    const verifiedTokens = new Map<string, { claims: VerifiedClaims; expires: number }>();

    async function verified(token: string): Promise<VerifiedClaims> {
      const now = Date.now();
      const hit = verifiedTokens.get(token);
      if (hit && hit.expires > now) return hit.claims;
      if (hit) verifiedTokens.delete(token);
      const claims = await options.tokens.verify(token);
      const expires = Math.min(now + TOKEN_CACHE_TTL_MS, claims.expiresAt === undefined ? Infinity : claims.expiresAt * 1000);
      // Oldest first out: Map iterates in insertion order.
      if (verifiedTokens.size >= TOKEN_CACHE_SIZE) verifiedTokens.delete(verifiedTokens.keys().next().value!);
      verifiedTokens.set(token, { claims, expires });
      return claims;
    }

    async function clientOfToken(token: string) {
      let claims;
      try {
        claims = await verified(token);
      } catch {
        throw unauthorized('The access token is invalid or expired');
      }
      const client = await cached(`id:${claims.clientId}`, () =>
        /^[0-9a-f-]{36}$/i.test(claims.clientId) ? findClientById(options.db, claims.clientId) : Promise.resolve(undefined),
      );
      if (!client || !tokenStillHonoured(client, claims.secretVersion)) {
        throw unauthorized('The access token names an unknown or disabled client, or was issued against a replaced secret');
      }
      return { client, scopes: claims.scopes };
    }

    async function clientOfApiKey(apiKey: string) {
      const keyHash = hashSecret(apiKey);
      const client = await cached(`key:${keyHash}`, () => findClientByApiKeyHash(options.db, keyHash));
      if (!client || client.disabled_at) throw unauthorized('The API key is invalid', false);
      return client;
    }

    async function authenticate(request: FastifyRequest): Promise<Caller | null> {
      const auth = request.routeOptions.config.spec?.auth;
      if (!auth || auth.kind === 'none') return null;

      const header = request.headers.authorization;
      const bearer = header?.match(/^Bearer\s+(\S+)$/i)?.[1];
      if (header && !bearer) throw unauthorized('The Authorization header must be "Bearer <token>"');
      const apiKeyHeader = request.headers['x-api-key'];
      const apiKey = Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader;

      if (auth.kind === 'both') {
        if (!bearer) throw unauthorized('A bearer access token is required', false);
        if (!apiKey) throw unauthorized('An x-api-key header is required', false);
      } else if (!bearer && !apiKey) {
        throw unauthorized('A bearer access token or an x-api-key header is required', false);
      }

      const fromToken = bearer ? await clientOfToken(bearer) : undefined;
      const fromKey = apiKey ? await clientOfApiKey(apiKey) : undefined;
      if (fromToken && fromKey && fromToken.client.id !== fromKey.id) {
        throw unauthorized('The access token and the API key belong to different clients', false);
      }
      const client = (fromToken?.client ?? fromKey)!;
      // A token carries the scopes granted at issue; an API key alone carries the client's own.
      const granted = fromToken ? fromToken.scopes.filter((s) => client.scopes.includes(s)) : client.scopes;

      if (!granted.includes(auth.scope)) {
        throw new HttpProblem(403, 'insufficient-scope', `This operation needs the scope ${auth.scope}`, {
          headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${auth.scope}"` },
          extensions: { required_scope: auth.scope },
        });
      }
      if (auth.roles && !auth.roles.includes(client.role)) {
        throw new HttpProblem(403, 'forbidden-role', `This operation is not available to ${client.role} clients`);
      }
      return { clientId: client.id, role: client.role, scopes: granted, payrollProviderId: client.payroll_provider_id, sandbox: client.sandbox };
    }

    /**
     * Fails closed: with Redis unreachable the limit cannot be enforced, and a payments API that
     * stops limiting when its limiter is down invites exactly the floods the limit exists for. The
     * caller gets 503 with Retry-After, and nothing was done, so a retry with the same
     * Idempotency-Key is safe. (The producer connection has no offline queue, so this is immediate.)
     */
    async function takeRateLimitToken(clientId: string) {
      try {
        return await options.rateLimiter.take(clientId);
      } catch (error) {
        throw new DependencyUnavailable('redis', { cause: error });
      }
    }

    app.decorateRequest('caller', null);
    // onRequest runs before the body is read: a caller without valid credentials is answered
    // without its body being received or parsed (the error handler closes the connection on it).
    app.addHook('onRequest', async (request, reply) => {
      const auth = request.routeOptions.config.spec?.auth;
      // Whatever an authenticated route answers is about a client's own business (people, pay,
      // bank details): nothing may keep a copy, refusals included.
      if (auth && auth.kind !== 'none') reply.header('cache-control', 'no-store');
      request.caller = await authenticate(request);
      if (!request.caller) return;
      const decision = await takeRateLimitToken(request.caller.clientId);
      reply.header('ratelimit-limit', String(decision.limit));
      reply.header('ratelimit-remaining', String(Math.max(0, decision.remaining)));
      reply.header('ratelimit-reset', String(decision.resetSeconds));
      if (!decision.allowed) {
        throw new HttpProblem(429, 'rate-limited', `Too many requests; retry after ${decision.retryAfterSeconds} s`, {
          headers: { 'retry-after': String(decision.retryAfterSeconds) },
        });
      }
    });
  },
  { name: 'authenticate' },
);
