import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import { z } from 'zod';
import {
  employeePushRecordSchema,
  enablementRequestSchema,
  fullAvailabilityRequestSchema,
  lightAvailabilityRequestSchema,
} from '../../directory/payroll-providers/reference-schemas.ts';
import type { SandboxDirectory } from '../sandbox/sandbox-directory.ts';
import { SandboxPayrollProvider, type SandboxPush } from '../sandbox/sandbox-provider.ts';
import { errorsPlugin } from './plugins/errors.ts';
import { fieldErrorsFromZod, HttpProblem } from './problem.ts';

export interface SandboxProviderOptions {
  directory: SandboxDirectory;
  clientId: string;
  clientSecret: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Lifetime of issued access tokens. Default 3600. */
  tokenTtlSeconds?: number;
}

export interface RunningSandboxProvider {
  /** Base URL of the reference operations (a provider's api_base_url). */
  url: string;
  /** The OAuth 2.0 token endpoint (a provider's api_token_url). */
  tokenUrl: string;
  directory: SandboxDirectory;
  /** The provider's state and behaviour, for tests and the demo to inspect. */
  provider: SandboxPayrollProvider;
  /** Employee pushes received and accepted, in arrival order. */
  pushes: readonly SandboxPush[];
  /** Forgets every issued token, as a provider rotating its keys would: the next call gets a 401. */
  revokeAllTokens(): void;
  close(): Promise<void>;
}

const tokenFormSchema = z.object({
  grant_type: z.string().optional(),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
});

const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** Compares digests, so neither the length nor the content of a wrong secret leaks through timing. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** client_secret_basic (RFC 6749 2.3.1), else client_secret_post. */
function clientCredentials(request: FastifyRequest, form: z.infer<typeof tokenFormSchema>): { id: string; secret: string } | undefined {
  const basic = request.headers.authorization?.match(/^Basic\s+(\S+)$/i);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    const id = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    return id === undefined || secret === undefined ? undefined : { id, secret };
  }
  return form.client_id && form.client_secret ? { id: form.client_id, secret: form.client_secret } : undefined;
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new HttpProblem(422, 'validation-failed', 'The request body is invalid', { errors: fieldErrorsFromZod(parsed.error) });
  }
  return parsed.data;
}

/**
 * Starts the sandbox payroll provider: a Fastify server of its own (never the service's app)
 * answering the reference operations on the same paths our adapter calls, behind its own
 * client-credentials token endpoint that issues opaque tokens. It sits with the HTTP layer because
 * it answers the sandbox provider's refusals the way this service answers its own, through the
 * same error plugin.
 */
export async function startSandboxProvider(options: SandboxProviderOptions): Promise<RunningSandboxProvider> {
  const provider = new SandboxPayrollProvider(options.directory);
  const tokenTtlSeconds = options.tokenTtlSeconds ?? 3600;
  /** Opaque access token -> expiry (epoch ms). */
  const tokens = new Map<string, number>();

  const app = Fastify({ logger: false });
  await app.register(formbody);
  await app.register(errorsPlugin);

  const issueToken = async (request: FastifyRequest, reply: FastifyReply) => {
    const oauthError = (status: number, error: string, description: string) => reply.code(status).headers(noStore).send({ error, error_description: description });
    const form = tokenFormSchema.safeParse(request.body ?? {});
    if (!form.success) return oauthError(400, 'invalid_request', 'Malformed token request');
    if (form.data.grant_type !== 'client_credentials') {
      return oauthError(400, 'unsupported_grant_type', 'Only the client_credentials grant is supported');
    }
    const credentials = clientCredentials(request, form.data);
    if (!credentials || credentials.id !== options.clientId || !sameSecret(credentials.secret, options.clientSecret)) {
      reply.header('www-authenticate', 'Basic realm="sandbox"');
      return oauthError(401, 'invalid_client', 'Client authentication failed');
    }
    const now = Date.now();
    for (const [token, expiresAt] of tokens) if (expiresAt <= now) tokens.delete(token);
    const accessToken = randomBytes(32).toString('base64url');
    tokens.set(accessToken, now + tokenTtlSeconds * 1000);
    return reply.code(200).headers(noStore).send({ access_token: accessToken, token_type: 'Bearer', expires_in: tokenTtlSeconds });
  };
  app.post('/oauth2/token', issueToken);
  app.post('/oauth/token', issueToken);

  const requireToken = async (request: FastifyRequest) => {
    const token = request.headers.authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
    const expiresAt = token === undefined ? undefined : tokens.get(token);
    if (expiresAt === undefined || expiresAt <= Date.now()) {
      throw new HttpProblem(401, 'unauthorized', 'A valid bearer token from the sandbox token endpoint is required', {
        headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
      });
    }
  };

  app.register(async (api) => {
    api.addHook('onRequest', requireToken);
    api.post('/deductions/availability/light', async (request) => provider.lightAvailability(parseBody(lightAvailabilityRequestSchema, request.body)));
    api.post('/deductions/availability/full', async (request) => provider.fullAvailability(parseBody(fullAvailabilityRequestSchema, request.body)));
    api.post('/deductions/enablement', async (request) => provider.enablement(parseBody(enablementRequestSchema, request.body)));
    api.get<{ Params: { payroll_id: string } }>('/payrolls/:payroll_id', async (request) => provider.payrollInformation(request.params.payroll_id));
    api.post<{ Params: { payroll_id: string } }>('/deductions/payroll/:payroll_id', async (request) =>
      provider.receivePush(request.params.payroll_id, parseBody(employeePushRecordSchema, request.body)),
    );
  });

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  return {
    url,
    tokenUrl: `${url}/oauth2/token`,
    directory: options.directory,
    provider,
    pushes: provider.pushes,
    revokeAllTokens: () => tokens.clear(),
    close: () => app.close(),
  };
}
