import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import type { ClientRole, DB } from '../../platform/db/tables.ts';
import type { WriteAlongside } from '../../platform/db/write-alongside.ts';
import type { Scope } from '../../directory/auth/scopes.ts';
import type { Caller } from '../../platform/shared/caller.ts';
import type { FieldError } from '../../platform/shared/domain-errors.ts';
import { metadataSchema } from '../../platform/shared/schemas.ts';
import { unstorableInputErrors } from './input-safety.ts';
import { HttpProblem, fieldErrorsFromZod } from './problem.ts';

export interface HttpResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /**
   * Runs once the effect's transaction has committed (and never on a replay): for enqueueing work
   * that must see the committed rows. Not stored; a failure here is logged, not returned.
   */
  afterCommit?: () => Promise<void>;
}

export type AuthRequirement =
  | { kind: 'none' }
  /** Bearer token and API key, both valid and of one client (the general rule). */
  | { kind: 'both'; scope: Scope; roles?: readonly ClientRole[] }
  /** Either credential is enough (the salary-deduction interface allows it for the data request). */
  | { kind: 'either'; scope: Scope; roles?: readonly ClientRole[] };

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteContext<B, Q, P> {
  request: FastifyRequest;
  reply: FastifyReply;
  body: B;
  query: Q;
  params: P;
  caller: Caller;
}

interface RouteBase<BS, QS, PS> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  operationId: string;
  /** A few words for the reference's table of contents; what the operation does in detail goes in `description`. */
  summary: string;
  /**
   * What an integrator needs to call it: what it does, what it changes and when it refuses
   * (Markdown). The statuses every route of its kind answers (authentication, validation,
   * Idempotency-Key, rate limit, outages) are added to /openapi.json from the spec itself.
   */
  description: string;
  tags: string[];
  auth: AuthRequirement;
  /** A limit of its own (a batch larger than BODY_LIMIT_BYTES, a form smaller); see bodyLimitOf. */
  bodyLimit?: number;
  body?: BS;
  /**
   * A body that is not JSON, handed to the route as its stream (a CSV file): documented in
   * /openapi.json under its media type; `body` stays unset and the route's own content-type parser
   * reads it.
   */
  streamedBody?: { contentType: string; description: string; example: string };
  query?: QS;
  params?: PS;
  /**
   * A body the handler reads itself rather than through `body` (the token endpoint's form), so
   * that /openapi.json can still describe it. Not validated by defineRoute.
   */
  documentedBody?: { schema: Schema; contentType: string };
  /**
   * The responses of this operation's own logic, by status, for /openapi.json: its successes and
   * the refusals of its service (404, 409, 422...). A 4xx or 5xx without a schema is a
   * ProblemDetails. What follows from the spec (see derivedResponses in openapi.ts) is added.
   * `alternatives` are other media types the same status may answer in (the caller chooses).
   */
  responses: Record<number, { description: string; schema?: Schema; contentType?: string; alternatives?: ReadonlyArray<{ contentType: string; schema: Schema }> }>;
}

/** Reads and non-idempotent operations: the handler answers directly. */
export interface HandlerRoute<BS, QS, PS> extends RouteBase<BS, QS, PS> {
  handler: (ctx: RouteContext<Out<BS>, Out<QS>, Out<PS>>) => Promise<HttpResult | FastifyReply>;
}

/**
 * Mutations: the effect runs inside one transaction, together with the stored idempotent response,
 * so a replay can never disagree with what was done.
 */
export interface EffectRoute<BS, QS, PS> extends RouteBase<BS, QS, PS> {
  idempotencyKey: 'required' | 'optional';
  /**
   * The effect stores its response in its own write statement (see ResponseInWrite): with a key, it
   * gets `storeResponse`, calls it with the result it is about to answer, and puts what comes back into
   * that write. Two statements fewer; for the busiest writes, cheap enough that a duplicate may run
   * them up to that write before it is answered from the first.
   */
  responseInWrite?: boolean;
  effect: (ctx: RouteContext<Out<BS>, Out<QS>, Out<PS>>, trx: Transaction<DB>, storeResponse: StoreResponse | undefined) => Promise<HttpResult>;
}

/**
 * Questions asked over POST (availability checks): they change nothing but their own log. With an
 * Idempotency-Key a retry replays the first successful answer, kept `replayRetentionHours` (see
 * createIdempotentQuestions).
 */
export interface QuestionRoute<BS, QS, PS> extends RouteBase<BS, QS, PS> {
  idempotencyKey: 'optional';
  replayRetentionHours: number;
  ask: (ctx: RouteContext<Out<BS>, Out<QS>, Out<PS>>) => Promise<HttpResult>;
}

/** Turns the result an effect will answer into the write that stores it (see EffectRoute.responseInWrite). */
export type StoreResponse = (result: HttpResult) => WriteAlongside;

export type RouteSpec<BS = any, QS = any, PS = any> = HandlerRoute<BS, QS, PS> | EffectRoute<BS, QS, PS> | QuestionRoute<BS, QS, PS>;

export function isQuestionRoute(spec: RouteSpec): spec is QuestionRoute<any, any, any> {
  return 'ask' in spec;
}

/** A route that takes an Idempotency-Key: a mutation, or a question whose answer is replayed. */
export function takesIdempotencyKey(spec: RouteSpec): spec is EffectRoute<any, any, any> | QuestionRoute<any, any, any> {
  return isEffectRoute(spec) || isQuestionRoute(spec);
}

export function isEffectRoute(spec: RouteSpec): spec is EffectRoute<any, any, any> {
  return 'effect' in spec;
}

declare module 'fastify' {
  interface FastifyInstance {
    routeSpecs: RouteSpec[];
    /** BODY_LIMIT_BYTES: the largest body a route of the usual kind accepts (see bodyLimitOf). */
    largestBodyBytes: number;
    runEffect: EffectRunner;
    runQuestion: QuestionRunner;
  }
  interface FastifyRequest {
    caller: Caller | null;
    rawBody: string | undefined;
  }
  interface FastifyContextConfig {
    spec?: RouteSpec;
  }
}

/**
 * Validates one part of the request: first what no field can hold (see unstorableInputErrors),
 * then the route's schema. An invalid body is 422; invalid path or query parameters are 400, and
 * their pointers are prefixed /path and /query.
 */
function parsePart<S extends Schema | undefined>(schema: S, value: unknown, what: 'path' | 'query' | 'body') {
  if (!schema) return undefined;
  const pointerPrefix = what === 'body' ? '' : `/${what}`;
  const invalid = (errors: FieldError[]) => new HttpProblem(what === 'body' ? 422 : 400, 'validation-failed', `The request ${what} is invalid`, { errors });
  // Wherever it was sent, text PostgreSQL cannot store is a value no schema can accept: 422.
  const unstorable = unstorableInputErrors(value, pointerPrefix);
  if (unstorable.length > 0) {
    throw new HttpProblem(422, 'validation-failed', `The request ${what} holds text that cannot be stored`, { errors: unstorable });
  }
  const result = schema.safeParse(value ?? (what === 'body' ? undefined : {}));
  if (result.success) return result.data;
  throw invalid(fieldErrorsFromZod(result.error, pointerPrefix));
}

export function sendResult(reply: FastifyReply, result: HttpResult): FastifyReply {
  reply.code(result.status);
  for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
  if (result.status === 204 || result.body === undefined) return reply.send();
  return reply
    .type(reply.getHeader('content-type')?.toString() ?? 'application/json; charset=utf-8')
    .send(typeof result.body === 'string' ? result.body : JSON.stringify(result.body));
}

function isJson(contentType: string | undefined): boolean {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** Whether a route's body may be left out altogether (its schema accepts no body). */
export function bodyIsOptional(schema: Schema | undefined): boolean {
  return schema !== undefined && schema.safeParse(undefined).success;
}

/** A request that sent no body at all: no media type, nothing to read. */
function sentNoBody(request: FastifyRequest): boolean {
  const { headers } = request;
  return headers['content-type'] === undefined && headers['transfer-encoding'] === undefined && Number(headers['content-length'] ?? 0) === 0;
}

export type EffectRunner = (ctx: RouteContext<any, any, any>, spec: EffectRoute<any, any, any>) => Promise<FastifyReply>;
export type QuestionRunner = (ctx: RouteContext<any, any, any>, spec: QuestionRoute<any, any, any>) => Promise<FastifyReply>;

/** The body of a route that takes none: room for an empty `{}` and little else. */
export const NO_BODY_LIMIT_BYTES = 1024;
/**
 * A JSON body without metadata: one resource of a few dozen fields; the largest of them, an
 * employee push with its requested payments, stays well inside this.
 */
export const PLAIN_BODY_LIMIT_BYTES = 64 * 1024;

/** Zod wrappers and containers a body schema can hold the metadata schema in. */
function holdsSchema(schema: z.core.$ZodType, wanted: z.core.$ZodType, seen = new Set<unknown>()): boolean {
  if (schema === wanted) return true;
  if (seen.has(schema)) return false;
  seen.add(schema);
  const def = schema._zod.def as unknown as Record<string, unknown>;
  const children = [
    ...Object.values((def.shape as Record<string, z.core.$ZodType> | undefined) ?? {}),
    def.innerType,
    def.element,
    def.valueType,
    def.in,
    def.out,
    def.left,
    def.right,
    ...((def.options as unknown[] | undefined) ?? []),
    ...((def.items as unknown[] | undefined) ?? []),
  ].filter((child): child is z.core.$ZodType => typeof child === 'object' && child !== null && '_zod' in child);
  return children.some((child) => holdsSchema(child, wanted, seen));
}

/**
 * How many bytes of a route's body are read before it is refused with 413: as many as the route
 * can use. Bodies that can carry biller metadata (3 items of up to 1 MB each) may be as large as
 * BODY_LIMIT_BYTES; other JSON bodies PLAIN_BODY_LIMIT_BYTES; routes without a body almost nothing.
 * A route's own bodyLimit wins (a batch, a form). Never more than BODY_LIMIT_BYTES unless the
 * route says so.
 */
export function bodyLimitOf(spec: Pick<RouteSpec, 'bodyLimit' | 'body'>, largestBodyBytes: number): number {
  if (spec.bodyLimit) return spec.bodyLimit;
  if (!spec.body) return Math.min(NO_BODY_LIMIT_BYTES, largestBodyBytes);
  if (holdsSchema(spec.body, metadataSchema)) return largestBodyBytes;
  return Math.min(PLAIN_BODY_LIMIT_BYTES, largestBodyBytes);
}

/**
 * Registers a route whose body, query and params are validated by zod (unknown fields are the
 * schema's business: resource schemas are strict) and records it for the OpenAPI document.
 */
export function defineRoute<BS extends Schema | undefined, QS extends Schema | undefined, PS extends Schema | undefined>(
  app: FastifyInstance,
  spec: RouteSpec<BS, QS, PS>,
): void {
  app.routeSpecs.push(spec as RouteSpec);
  const optionalBody = bodyIsOptional(spec.body);
  app.route({
    method: spec.method,
    url: spec.url,
    config: { spec: spec as RouteSpec },
    bodyLimit: bodyLimitOf(spec, app.largestBodyBytes),
    handler: async (request, reply) => {
      // A route whose body is optional takes a call without one; any body it gets must be JSON.
      if (spec.body && !isJson(request.headers['content-type']) && !(optionalBody && sentNoBody(request))) {
        throw new HttpProblem(415, 'unsupported-media-type', 'Send the body as application/json');
      }
      const params = parsePart(spec.params, request.params, 'path');
      const query = parsePart(spec.query, request.query, 'query');
      const body = parsePart(spec.body, request.body, 'body');
      const ctx = { request, reply, body, query, params, caller: request.caller! } as RouteContext<any, any, any>;
      if (isEffectRoute(spec as RouteSpec)) return app.runEffect(ctx, spec as EffectRoute<any, any, any>);
      if (isQuestionRoute(spec as RouteSpec)) return app.runQuestion(ctx, spec as QuestionRoute<any, any, any>);
      const result: HttpResult | FastifyReply | undefined = await (spec as HandlerRoute<BS, QS, PS>).handler(ctx);
      // A handler that answered itself returns the reply, which is a thenable: awaiting it waited for
      // the response to finish and gave undefined. Handing Fastify nothing then is what keeps it
      // from answering twice (and a failed stream reaches the error handler as an error).
      if (result === undefined || (result as unknown) === reply) {
        if (reply.sent || reply.raw.headersSent) return;
        throw new Error(`${spec.method} ${spec.url} returned without answering`);
      }
      return sendResult(reply, result as HttpResult);
    },
  });
}
