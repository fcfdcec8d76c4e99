import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { z } from 'zod';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { RedisClient } from '../../platform/runtime/redis-connections.ts';
import { pingDatabase } from '../../platform/db/ping.ts';
import type { Config } from '../../platform/config/config.ts';
import type { Database } from '../../platform/db/connection.ts';
import { FailureLimiter, RateLimiter } from '../../platform/shared/rate-limiter.ts';
import type { TokenIssuer } from '../../directory/auth/token-issuer.ts';
import { TokenThrottle } from '../../directory/auth/token-throttle.ts';
import type { AdapterFactory } from '../../directory/payroll-providers/adapter.ts';
import type { ReconciliationRequester } from '../../cycle/reconciliation/reconciliation-requests.ts';
import type { DependencyHealth } from '../../platform/runtime/dependency-health.ts';
import { outageReporter } from './dependency-errors.ts';
import { registerTokenRoutes } from './routes/token-routes.ts';
import { loggerOptions } from '../../platform/shared/logger.ts';
import { useCursorKeys } from '../../platform/shared/paging.ts';
import { registerApiDocs } from './api-docs.ts';
import { createEffectRunner, createQuestionRunner } from './effect-runner.ts';
import { answeredWithin } from '../../platform/shared/answered-within.ts';
import { API_VERSION, API_VERSION_HEADER } from './api-version.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { publishedWebhooks } from '../webhooks/webhook-event-schemas.ts';
import { authenticatePlugin } from './plugins/authenticate.ts';
import { clientErrorHandler, errorsPlugin, frameworkErrorHandler } from './plugins/errors.ts';
import { defineRoute, NO_BODY_LIMIT_BYTES } from './route.ts';
import { HttpProblem } from './problem.ts';
import { requestIdOf } from './request-id.ts';
import { registerMetrics } from './metrics-route.ts';

export interface AppDeps {
  config: Config;
  db: Database;
  /**
   * The read replica's pool (DATABASE_READ_URL) for reports, exports and the console's read-only
   * pages, which choose it through readSource; absent or `db` itself, they read the primary.
   */
  readDb?: Database;
  /** A producer connection (enableOfflineQueue false): readiness must fail fast, not queue. */
  redis: RedisClient;
  tokens: TokenIssuer;
  /** Reaches payroll providers that implement the reference interface over HTTP. */
  adapterFor: AdapterFactory;
  /** Queues (debounced) reconciliation once deduction records for a pay date are accepted. */
  reconciliation: ReconciliationRequester;
  /** A ready logger instead of one built from LOG_LEVEL (tests read what the app logs). */
  logger?: FastifyBaseLogger;
  /**
   * The process's health monitor (`serve`, `start`): requests refused for an outage are reported to
   * it, which logs the outage once, instead of each logging a warning.
   */
  health?: DependencyHealth;
}

/** Later areas plug their routes in here; each gets the same dependencies. */
export type RouteModule = (app: FastifyInstance, deps: AppDeps) => void;

export async function buildApp(deps: AppDeps, routeModules: readonly RouteModule[] = []): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: loggerOptions(deps.config) }),
    // Each route of defineRoute sets the limit its body needs (bodyLimitOf); this is for any other.
    bodyLimit: NO_BODY_LIMIT_BYTES,
    requestIdHeader: false,
    genReqId: requestIdOf,
    trustProxy: trustedProxies(deps.config.TRUST_PROXY),
    // What the router and the HTTP parser reject is answered as problem+json too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });

  // Cursors are signed with a secret every process sharing the signing key file derives alike.
  useCursorKeys(deps.tokens.derivedSecrets('paging cursors'));

  app.decorate('routeSpecs', []);
  app.decorate('largestBodyBytes', deps.config.BODY_LIMIT_BYTES);
  app.decorate('runEffect', createEffectRunner({ db: deps.db, retentionDays: deps.config.IDEMPOTENCY_RETENTION_DAYS }));
  app.decorate('runQuestion', createQuestionRunner({ db: deps.db }));
  app.decorateRequest('rawBody', undefined);

  // Keep the exact bytes: the idempotency fingerprint hashes what the client sent, not a re-encoding.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.rawBody = body as string;
    if ((body as string).trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new HttpProblem(400, 'malformed-json', 'The request body is not valid JSON'), undefined);
    }
  });
  await app.register(formbody);
  // First of the request hooks, so that every refusal carries these headers too.
  await app.register(helmet, securityHeaders(deps.config));
  // Every answer, refusals included, says which contract it was made under (see api-version.ts).
  app.addHook('onRequest', async (_request, reply) => {
    reply.header(API_VERSION_HEADER, API_VERSION);
  });
  await app.register(errorsPlugin, { outages: outageReporter(deps.health) });
  registerMetrics(app, deps);
  await app.register(authenticatePlugin, {
    db: deps.db,
    tokens: deps.tokens,
    rateLimiter: new RateLimiter(deps.redis, deps.config.QUEUE_PREFIX, deps.config.RATE_LIMIT_PER_SECOND, deps.config.RATE_LIMIT_BURST),
  });

  const tokenThrottle = new TokenThrottle(new FailureLimiter(deps.redis, deps.config.QUEUE_PREFIX, deps.config.TOKEN_FAILURE_WINDOW_SECONDS), {
    perAddress: deps.config.TOKEN_FAILURES_PER_ADDRESS,
    perClient: deps.config.TOKEN_FAILURES_PER_CLIENT,
  });
  registerTokenRoutes(app, { ...deps, tokenThrottle });
  registerOperationalRoutes(app, deps);
  registerApiDocs(app);
  for (const register of routeModules) register(app, deps);

  return app;
}

/** A hop count trusts that many proxies nearest the server (Fastify's types lack the number form). */
function trustedProxies(setting: Config['TRUST_PROXY']) {
  return typeof setting === 'number' ? (_address: string, hop: number) => hop < setting : setting;
}

/**
 * Responses are JSON and files, never pages (the reference at /docs sets a policy of its own): no
 * content sniffing, no framing, no script sources.
 * HSTS only where the service is reached over TLS (a browser ignores it over plain HTTP, and
 * sending it from a development host would pin that host name to HTTPS).
 */
function securityHeaders(config: Config) {
  const overTls = new URL(config.PUBLIC_BASE_URL).protocol === 'https:';
  return {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    hsts: overTls ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  } as const;
}

const healthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health', description: 'The process is alive.', example: { status: 'ok' } });

const checkSchema = z.enum(['ok', 'unavailable']);
const readinessSchema = z.object({ status: z.enum(['ready', 'not_ready']), checks: z.object({ postgres: checkSchema, redis: checkSchema }) }).meta({
  id: 'Readiness',
  description: 'Whether each dependency answered in time; `ready` only when all did.',
  example: { status: 'not_ready', checks: { postgres: 'ok', redis: 'unavailable' } },
});

const openApiDocumentSchema = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }).meta({
  id: 'OpenApiDocument',
  description: 'An OpenAPI 3.1 document: this one.',
  example: { openapi: '3.1.0', info: { title: 'Salary deduction and payment collection service', version: API_VERSION }, paths: {} },
});

/** A probe must answer even when a dependency hangs rather than refuses (a partition, a full pool). */
const READINESS_TIMEOUT_MS = 2_000;

async function answersWithin(check: Promise<unknown>, timeoutMs: number): Promise<'ok' | 'unavailable'> {
  return answeredWithin(check, timeoutMs).then(
    () => 'ok' as const,
    () => 'unavailable' as const,
  );
}

function registerOperationalRoutes(app: FastifyInstance, deps: AppDeps): void {
  defineRoute(app, {
    method: 'GET',
    url: '/healthz',
    operationId: 'health',
    summary: 'Liveness',
    description:
      'Answers 200 while the process runs. It checks no dependency (that is `/readyz`), so an orchestrator ' + 'restarts the process only when the process itself is stuck.',
    tags: ['Operations'],
    auth: { kind: 'none' },
    responses: { 200: { description: 'Alive', schema: healthSchema } },
    handler: async () => ({ status: 200, body: { status: 'ok' } }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/readyz',
    operationId: 'readiness',
    summary: 'Readiness',
    description:
      'Whether PostgreSQL and Redis both answer within 2 seconds: 200 when they do, 503 when either does not, ' +
      "with each check's result in the body. Take the instance out of rotation while it answers 503.",
    tags: ['Operations'],
    auth: { kind: 'none' },
    responses: {
      200: { description: 'Ready', schema: readinessSchema },
      503: { description: 'A dependency is down', schema: readinessSchema },
    },
    handler: async () => {
      const [postgres, redis] = await Promise.all([answersWithin(pingDatabase(deps.db), READINESS_TIMEOUT_MS), answersWithin(deps.redis.ping(), READINESS_TIMEOUT_MS)]);
      const ready = postgres === 'ok' && redis === 'ok';
      return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'not_ready', checks: { postgres, redis } } };
    },
  });

  let openApiDocument: ReturnType<typeof buildOpenApiDocument> | undefined;
  defineRoute(app, {
    method: 'GET',
    url: '/openapi.json',
    operationId: 'openapi',
    summary: 'This API description (OpenAPI 3.1)',
    description:
      'This document, generated from the same schemas that validate requests, so it cannot drift from what the ' + 'API accepts. The reference page at `/docs` renders it.',
    tags: ['Operations'],
    auth: { kind: 'none' },
    responses: { 200: { description: 'OpenAPI document', schema: openApiDocumentSchema } },
    // Built once, on the first request (every route is registered by then): building it converts every
    // schema, about 100 ms of CPU, which an anonymous caller could otherwise ask for at will.
    handler: async () => {
      openApiDocument ??= buildOpenApiDocument(app.routeSpecs, {
        serverUrl: deps.config.PUBLIC_BASE_URL,
        largestBodyBytes: deps.config.BODY_LIMIT_BYTES,
        webhooks: publishedWebhooks,
      });
      return { status: 200, body: openApiDocument };
    },
  });
}
