import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Executor } from '../../../platform/db/connection.ts';
import { defineRoute, type HttpResult } from '../route.ts';
import { findClientById } from '../../../directory/auth/clients-repository.ts';
import { grantScopes } from '../../../directory/auth/scopes.ts';
import { secretMatches } from '../../../directory/auth/secrets.ts';
import type { TokenIssuer } from '../../../directory/auth/token-issuer.ts';
import type { TokenThrottle } from '../../../directory/auth/token-throttle.ts';
import { exampleIds } from '../../../platform/shared/examples.ts';

/** A client_credentials form is a few hundred bytes; nothing larger is read before authentication. */
export const TOKEN_BODY_LIMIT_BYTES = 8 * 1024;

export const tokenResponseSchema = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    /** Seconds. */
    expires_in: z.number().int(),
    scope: z.string(),
  })
  .meta({
    id: 'TokenResponse',
    description: 'An access token (a signed JWT) for the `Authorization: Bearer` header, its lifetime in seconds and the scopes it carries, space-separated.',
    example: {
      access_token: 'eyJhbGciOiJFUzI1NiIsImtpZCI6IjIwMjYtMTEifQ.eyJzdWIiOiIwMTkzYTRmMCJ9.c2lnbmF0dXJl',
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'payments:write payments:read',
    },
  });

export const tokenErrorSchema = z.object({ error: z.string(), error_description: z.string() }).meta({
  id: 'OAuthError',
  description:
    'An RFC 6749 (section 5.2) error: `invalid_request`, `invalid_client`, `invalid_scope`, `unsupported_grant_type`, or ' +
    '`temporarily_unavailable` after too many failed authentications.',
  example: { error: 'invalid_client', error_description: 'Client authentication failed' },
});

/** What the token endpoint reads from its form body; the handler checks each field itself. */
const tokenRequestSchema = z
  .object({
    grant_type: z.string().optional(),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    scope: z.string().optional(),
  })
  .meta({
    id: 'TokenRequest',
    description:
      '`grant_type` must be `client_credentials`. Send `client_id` and `client_secret` here, or as HTTP Basic instead (not both). ' +
      "`scope`, space-separated, narrows the token to some of the client's scopes.",
    example: {
      grant_type: 'client_credentials',
      client_id: exampleIds.biller,
      client_secret: 'cs_97t9SUsUr1YmEJbJH70wen69AjIAAKwfABhEd02D00Q',
      scope: 'payments:write payments:read',
    },
  });

const jsonWebKeySetSchema = z.object({ keys: z.array(z.looseObject({ kty: z.string(), kid: z.string(), alg: z.string(), use: z.string() })) }).meta({
  id: 'JsonWebKeySet',
  description: 'RFC 7517 public keys (ES256, P-256); a token names its key by `kid`. During a key rotation both keys are listed.',
  example: {
    keys: [
      {
        kty: 'EC',
        crv: 'P-256',
        x: 'THRl75o29PDFnuOs4NWnpNnqpS8ax9Lh0h_09YC1TAY',
        y: 'FMwtvKCcVTvwpUTqV9Vcfib0_6F9jHwGsyiOCawc_zc',
        kid: 'lZ4bS5QTuMbD3dI0VrvM5H2v8a1XfJc3kq7wYp9nT0E',
        alg: 'ES256',
        use: 'sig',
      },
    ],
  },
});

const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** RFC 6749 section 5.2: token errors are {error, error_description}, not problem+json. */
function oauthError(status: number, error: string, description: string, basic = false): HttpResult {
  return {
    status,
    body: { error, error_description: description },
    headers: { ...noStore, ...(basic ? { 'www-authenticate': 'Basic realm="token"' } : {}) },
  };
}

function basicCredentials(request: FastifyRequest): { id: string; secret: string } | undefined {
  const match = request.headers.authorization?.match(/^Basic\s+(\S+)$/i);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  // RFC 6749 2.3.1: both parts are form-urlencoded before Basic encoding.
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

/** A malformed escape (`%zz`) must fail authentication, not throw a URIError into a 500. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return value;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The client id a token request names (Basic or form), if it could name a client at all. */
function namedClientId(request: FastifyRequest): string | undefined {
  const body = request.body as Record<string, unknown> | undefined;
  const named = basicCredentials(request)?.id ?? (typeof body?.client_id === 'string' ? body.client_id : undefined);
  return named !== undefined && UUID.test(named) ? named.toLowerCase() : undefined;
}

export function registerTokenRoutes(app: FastifyInstance, deps: { db: Executor; tokens: TokenIssuer; tokenThrottle: TokenThrottle }): void {
  /**
   * Failed client authentications are counted per address and per client id (TokenThrottle). An
   * address that has used up its failures is answered 429 until its bucket refills, before its
   * credentials are looked at; a client id whose failures are used up is refused only to the
   * addresses that failed for it, so nobody can keep a client from its tokens by guessing at its id.
   */
  const issueToken = async ({ request }: { request: FastifyRequest }): Promise<HttpResult> => {
    const retryAfter = await deps.tokenThrottle.retryAfterSeconds(request.ip, namedClientId(request));
    if (retryAfter > 0) {
      const result = oauthError(429, 'temporarily_unavailable', `Too many failed client authentications; retry after ${retryAfter} s`);
      return { ...result, headers: { ...result.headers, 'retry-after': String(retryAfter) } };
    }
    const outcome = await authenticateAndIssue(request);
    if ('failedClientId' in outcome) {
      await deps.tokenThrottle.recordFailure(request.ip, outcome.failedClientId);
      return outcome.result;
    }
    return outcome;
  };

  /** The token response, or the invalid_client refusal together with the existing client it named. */
  const authenticateAndIssue = async (request: FastifyRequest): Promise<HttpResult | { result: HttpResult; failedClientId: string | undefined }> => {
    // Media types are case-insensitive (RFC 9110 8.3.1).
    if (!request.headers['content-type']?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
      return oauthError(400, 'invalid_request', 'The token request must be application/x-www-form-urlencoded');
    }
    const form = tokenRequestSchema.safeParse(request.body);
    if (!form.success) return oauthError(400, 'invalid_request', 'Malformed token request');
    const basic = basicCredentials(request);
    if (basic && form.data.client_secret) {
      return oauthError(400, 'invalid_request', 'Use one client authentication method, not two');
    }
    if (!form.data.grant_type) {
      // RFC 6749 5.2: a missing required parameter is invalid_request, not an unsupported grant.
      return oauthError(400, 'invalid_request', 'The grant_type parameter is required');
    }
    if (form.data.grant_type !== 'client_credentials') {
      return oauthError(400, 'unsupported_grant_type', 'Only the client_credentials grant is supported');
    }
    const clientId = basic?.id ?? form.data.client_id;
    const secret = basic?.secret ?? form.data.client_secret;
    if (!clientId || !secret) {
      return { result: oauthError(401, 'invalid_client', 'Client authentication is required', !!basic), failedClientId: undefined };
    }
    const client = UUID.test(clientId) ? await findClientById(deps.db, clientId) : undefined;
    if (!client || client.disabled_at || !secretMatches(secret, client.secret_hash)) {
      return { result: oauthError(401, 'invalid_client', 'Client authentication failed', !!basic), failedClientId: client?.id };
    }
    const granted = grantScopes(form.data.scope, client.scopes);
    if (!granted) {
      return oauthError(400, 'invalid_scope', 'The requested scope exceeds the scopes granted to this client');
    }
    const accessToken = await deps.tokens.issue({ clientId: client.id, scopes: granted, secretVersion: client.secret_version });
    return {
      status: 200,
      body: { access_token: accessToken, token_type: 'Bearer', expires_in: deps.tokens.ttlSeconds, scope: granted.join(' ') },
      headers: noStore,
    };
  };

  // OAuth clients expect RFC 6749 errors whatever they send, so this scope accepts any body and
  // lets the handler answer invalid_request, instead of the app-wide 415 problem.
  app.register(async (scope) => {
    // JSON included: a malformed JSON body is invalid_request here, not the app-wide malformed-json problem.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, _body, done) => done(null, undefined));
    registerTokenEndpoints(scope);
  });

  function registerTokenEndpoints(scope: FastifyInstance) {
    for (const url of ['/oauth2/token', '/oauth/token']) {
      defineRoute(scope, {
        method: 'POST',
        url,
        operationId: url === '/oauth2/token' ? 'issue_token' : 'issue_token_alias',
        summary: url === '/oauth2/token' ? 'Get an access token' : 'Get an access token (alias path)',
        description:
          url === '/oauth2/token'
            ? 'OAuth 2.0 client credentials grant (RFC 6749 section 4.4). The client authenticates with its id and ' +
              'secret, either as form fields (`client_secret_post`) or with HTTP Basic (`client_secret_basic`), not ' +
              "both. `scope` (space-separated) narrows the token to some of the client's scopes; left out, the token " +
              'carries all of them. Errors are RFC 6749 `{error, error_description}` objects. Repeated failed ' +
              'authentications from one address are refused with 429 until `Retry-After` has passed; once a client id has ' +
              'had many, the addresses that failed for it are refused for it too, while other addresses may still authenticate.'
            : 'The same as `POST /oauth2/token`, at the path some OAuth libraries assume.',
        tags: ['Authentication'],
        auth: { kind: 'none' },
        bodyLimit: TOKEN_BODY_LIMIT_BYTES,
        documentedBody: { schema: tokenRequestSchema, contentType: 'application/x-www-form-urlencoded' },
        responses: {
          200: { description: 'Access token', schema: tokenResponseSchema },
          400: { description: 'RFC 6749 error', schema: tokenErrorSchema },
          401: { description: 'invalid_client', schema: tokenErrorSchema },
          429: {
            description:
              'temporarily_unavailable: too many failed client authentications from this address, or from this address for a client id that many addresses failed for; see Retry-After',
            schema: tokenErrorSchema,
          },
          503: { description: 'PostgreSQL or Redis is unreachable; retry later (see `Retry-After`)' },
        },
        handler: issueToken,
      });
    }
  }

  defineRoute(app, {
    method: 'GET',
    url: '/.well-known/jwks.json',
    operationId: 'get_signing_keys',
    summary: 'Token signing keys (JWKS)',
    description: 'The public keys, as a JSON Web Key Set, that verify the access tokens this service issues. Cacheable for ' + '5 minutes.',
    tags: ['Authentication'],
    auth: { kind: 'none' },
    responses: { 200: { description: 'JSON Web Key Set', schema: jsonWebKeySetSchema } },
    handler: async () => ({ status: 200, body: deps.tokens.jwks, headers: { 'cache-control': 'public, max-age=300' } }),
  });
}
