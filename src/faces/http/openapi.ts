import { z } from 'zod';
import { scopeDescriptions } from '../../directory/auth/scopes.ts';
import { bodyIsOptional, bodyLimitOf, isEffectRoute, isQuestionRoute, type RouteSpec } from './route.ts';
import { API_VERSION } from './api-version.ts';
import { serviceUnavailable } from './dependency-errors.ts';
import { HttpProblem, problemDetailsSchema } from './problem.ts';

type Json = any;
type Io = 'input' | 'output';

/** Where a converted schema points before the components are named: `#/x-io/<io>/<zod id>`. */
const PENDING_REF = /^#\/x-io\/(input|output)\/(.+)$/;

/**
 * zod writes named schemas (`.meta({ id })`) as local `#/$defs/X` references; OpenAPI wants
 * them once under `components.schemas`. A schema read both ways (a request and a response) whose
 * input shape differs from its output shape (defaults, transforms) keeps its name for the output
 * and is `<name>Input` for the input; otherwise it is one component. Two different schemas given
 * the same id are a mistake the document refuses to hide.
 */
class ComponentCollector {
  private readonly definitions: Record<Io, Map<string, Json>> = { input: new Map(), output: new Map() };

  convert(schema: z.ZodType, io: Io): Json {
    // OpenAPI 3.1's schemas are JSON Schema 2020-12: null is a type, exclusive bounds are numbers.
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
    const definitions = (json.$defs ?? {}) as Record<string, Json>;
    delete json.$defs;
    delete json.$schema;
    const pending = (node: Json) => rewriteRefs(node, (ref) => ref.replace(/^#\/\$defs\//, `#/x-io/${io}/`));
    for (const [name, definition] of Object.entries(definitions)) {
      const converted = pending(definition);
      const known = this.definitions[io].get(name);
      if (known !== undefined && JSON.stringify(known) !== JSON.stringify(converted)) {
        throw new Error(`Two different schemas have the id ${name}: give each its own .meta({ id })`);
      }
      this.definitions[io].set(name, converted);
    }
    return pending(json);
  }

  /** The components, and how each pending reference is named among them. */
  finish(): { schemas: Record<string, Json>; nameOf: (io: Io, id: string) => string } {
    const { input, output } = this.definitions;
    // An id names two components when its input and output differ, or when it refers to one that does.
    const split = new Set<string>();
    for (let changed = true; changed;) {
      changed = false;
      for (const [name, definition] of input) {
        if (split.has(name) || !output.has(name)) continue;
        const differs =
          JSON.stringify(definition).replaceAll('#/x-io/input/', '#/x-io/output/') !== JSON.stringify(output.get(name)) ||
          refsOf(definition).some((ref) => split.has(ref.replace(PENDING_REF, '$2')));
        if (differs) {
          split.add(name);
          changed = true;
        }
      }
    }
    const nameOf = (io: Io, id: string) => (io === 'input' && split.has(id) ? `${id}Input` : id);
    const schemas: Record<string, Json> = {};
    // What only the service writes (responses, webhook payloads) may gain fields in a minor release,
    // so its schemas do not forbid them: a client validating answers strictly keeps working. A schema
    // clients also send stays closed, since the service refuses unknown fields in requests.
    for (const [name, definition] of output) schemas[nameOf('output', name)] = input.has(name) ? definition : openToAdditions(definition);
    for (const [name, definition] of input) schemas[nameOf('input', name)] ??= definition;
    return { schemas, nameOf };
  }
}

/** The schema without `additionalProperties: false`, at every level of it (not through references). */
function openToAdditions(node: Json): Json {
  if (Array.isArray(node)) return node.map(openToAdditions);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === false) continue;
    out[key] = key === 'example' ? value : openToAdditions(value);
  }
  return out;
}

function rewriteRefs(node: Json, rewrite: (ref: string) => string): Json {
  if (Array.isArray(node)) return node.map((child) => rewriteRefs(child, rewrite));
  if (node && typeof node === 'object') {
    const out: Record<string, Json> = {};
    for (const [key, value] of Object.entries(node)) {
      out[key] = key === '$ref' && typeof value === 'string' ? rewrite(value) : key === 'example' ? value : rewriteRefs(value, rewrite);
    }
    return out;
  }
  return node;
}

function refsOf(node: Json, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((child) => refsOf(child, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else if (key !== 'example') refsOf(value, found);
    }
  }
  return found;
}

/** A lone `allOf: [X]` (an optional named schema as zod writes it) is X itself. */
function normalizeSchemas(node: Json): Json {
  if (Array.isArray(node)) return node.map((child) => normalizeSchemas(child));
  if (!node || typeof node !== 'object') return node;
  const keys = Object.keys(node);
  if (keys.length === 1 && Array.isArray(node.allOf) && node.allOf.length === 1) return normalizeSchemas(node.allOf[0]);
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) out[key] = key === 'example' ? value : normalizeSchemas(value);
  return out;
}

function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function parameters(spec: RouteSpec, toSchema: (schema: z.ZodType, io: Io) => Json) {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', spec.params],
    ['query', spec.query],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema as z.ZodType, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      const { description, ...propertySchema } = property;
      out.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        ...(description === undefined ? {} : { description }),
        schema: propertySchema,
      });
    }
  }
  if (isQuestionRoute(spec)) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'A UUID the client generates for this question. A retry with the same key within ' +
        `${spec.replayRetentionHours} hours answers the first successful answer again (with \`Idempotent-Replayed: true\`), without asking ` +
        'again or counting against the limits; the answer is kept no longer, since it may be personal data. A refusal is not kept: a retry asks again.',
      schema: { type: 'string', format: 'uuid', example: '0b8e7c2e-2f6a-4c51-9d1e-7f3f1c2a9b10' },
    });
  }
  if (isEffectRoute(spec)) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: spec.idempotencyKey === 'required',
      description:
        'A UUID the client generates for this request. A retry with the same key replays the first answer (with `Idempotent-Replayed: true`) ' +
        'instead of doing the work again; keys are kept per client for the retention period.',
      schema: { type: 'string', format: 'uuid', example: '0b8e7c2e-2f6a-4c51-9d1e-7f3f1c2a9b10' },
    });
  }
  return out;
}

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', example: 5 } } };

/** Why an operation answers a status, and a problem it answers then (the example shown for it). */
interface DerivedReason {
  reason: string;
  example: HttpProblem;
}

/**
 * The statuses an operation answers because of what kind of route it is, whatever its service does,
 * each with the reasons that lead to it. Derived from the spec the way the code paths decide them:
 * authentication, scope and rate limit in plugins/authenticate.ts; the Idempotency-Key in
 * effect-runner.ts and the idempotency service; media types, JSON and sizes in app.ts and
 * plugins/errors.ts; params, query and body validation in route.ts (parsePart).
 */
function derivedResponses(spec: RouteSpec, largestBodyBytes: number): Map<number, DerivedReason[]> {
  const reasons = new Map<number, DerivedReason[]>();
  const add = (reason: string, example: HttpProblem) => reasons.set(example.status, [...(reasons.get(example.status) ?? []), { reason, example }]);
  const invalid = (status: 400 | 422, pointer: string, detail: string) =>
    new HttpProblem(status, 'validation-failed', `The request ${/^\/(query|path)\//.exec(pointer)?.[1] ?? 'body'} is invalid`, {
      errors: [{ pointer, detail }],
    });
  const { auth } = spec;

  if (auth.kind !== 'none') {
    add(
      auth.kind === 'both'
        ? 'A bearer access token and the `x-api-key` of the same client are both required: one is missing, invalid or expired, they belong to different clients, or the client is disabled'
        : "Neither a valid bearer access token nor a valid `x-api-key` was sent (either is enough; sent together they must be the same client's), or the client is disabled",
      new HttpProblem(401, 'unauthorized', 'The access token is invalid or expired'),
    );
    add(
      `The credentials do not carry the scope \`${auth.scope}\`${auth.roles ? `, or the client is not a ${auth.roles.join(' or ')} client` : ''}`,
      new HttpProblem(403, 'insufficient-scope', `This operation needs the scope ${auth.scope}`, { extensions: { required_scope: auth.scope } }),
    );
    add("Over the client's request rate limit; see `Retry-After` and the `RateLimit-*` headers", new HttpProblem(429, 'rate-limited', 'Too many requests; retry after 1 s'));
    add('PostgreSQL or Redis is unreachable; nothing was done, and a retry (with the same Idempotency-Key) is safe; see `Retry-After`', serviceUnavailable('postgres'));
  }
  if (spec.params) {
    add('A path parameter is malformed (an invalid percent-encoding)', new HttpProblem(400, 'bad-url', 'The URL path is not valid (a malformed percent-encoding)'));
    add('A path parameter is longer than any identifier of this API', new HttpProblem(414, 'uri-too-long', 'A path parameter is longer than any identifier of this API'));
  }
  if (spec.query) {
    add(
      'A query parameter is missing or invalid (paging cursors included); `errors` names each one (`/query/<name>`)',
      invalid(400, '/query/limit', 'Too big: expected number to be <=500'),
    );
  }
  if (spec.params || spec.query) {
    const pointer = spec.query ? '/query/after' : `/path/${/:([A-Za-z_]+)/.exec(spec.url)?.[1] ?? 'id'}`;
    add('A parameter holds text that cannot be stored (a NUL character or an unpaired surrogate)', invalid(422, pointer, 'must not contain the NUL character (U+0000)'));
  }
  if (spec.method !== 'GET') {
    // A body is read (and refused) whether or not the operation takes one; GET bodies are ignored.
    if (spec.documentedBody) {
      add('The Content-Length does not match the body', new HttpProblem(400, 'bad-request', 'The Content-Length does not match the body'));
    } else {
      add('The body is not valid JSON, or the Content-Length does not match it', new HttpProblem(400, 'malformed-json', 'The request body is not valid JSON'));
      add(
        spec.body ? 'The body is not `application/json`' : 'A body was sent, and not as `application/json` (this operation takes none)',
        new HttpProblem(415, 'unsupported-media-type', 'Send the body as application/json'),
      );
    }
    add(
      `The body is larger than this operation accepts (${bodyLimitOf(spec, largestBodyBytes)} bytes)`,
      new HttpProblem(413, 'body-too-large', 'The request body is larger than this service accepts'),
    );
  }
  if (spec.body) add('The body is invalid: `errors` names each field by JSON pointer', invalid(422, '/reason', 'Invalid input: expected string, received undefined'));
  if (isQuestionRoute(spec)) {
    add(
      'The Idempotency-Key header is not a UUID',
      new HttpProblem(400, 'invalid-idempotency-key', 'Idempotency-Key must be a UUID', { errors: [{ pointer: '/headers/idempotency-key', detail: 'must be a UUID' }] }),
    );
    add(
      'This Idempotency-Key was already used for a different request',
      new HttpProblem(422, 'idempotency-key-reused', 'This Idempotency-Key was already used for a different request'),
    );
  }
  if (isEffectRoute(spec)) {
    add(
      spec.idempotencyKey === 'required' ? 'The Idempotency-Key header is missing or not a UUID' : 'The Idempotency-Key header is not a UUID',
      new HttpProblem(400, 'invalid-idempotency-key', 'Idempotency-Key must be a UUID', { errors: [{ pointer: '/headers/idempotency-key', detail: 'must be a UUID' }] }),
    );
    if (spec.responseInWrite) {
      // A duplicate waits for the first and replays it; only a deadlock with a request holding the
      // same key on another operation is left to refuse.
      add(
        'A request with this Idempotency-Key on another operation ran at the same moment; nothing was done, see `Retry-After`',
        new HttpProblem(409, 'concurrent-request', 'Another request changed the same data at the same moment; nothing was done, retry shortly'),
      );
    } else {
      add(
        'A request with this Idempotency-Key is still being processed; see `Retry-After`',
        new HttpProblem(409, 'idempotency-key-in-flight', 'A request with this Idempotency-Key is still being processed; retry shortly'),
      );
    }
    add(
      'This Idempotency-Key was already used for a different request',
      new HttpProblem(422, 'idempotency-key-reused', 'This Idempotency-Key was already used for a different request'),
    );
  }
  // Node's HTTP parser refuses these before any route is chosen, for every operation alike.
  add(
    'The request line and headers are larger than this service accepts',
    new HttpProblem(431, 'headers-too-large', 'The request line and headers are larger than this service accepts'),
  );
  return reasons;
}

function describeReasons(reasons: readonly string[]): string {
  return reasons.length === 1 ? reasons[0]! : reasons.map((reason) => `- ${reason}`).join('\n');
}

const authDescriptions = {
  both: (scope: string) => `**Authentication:** a bearer access token with the scope \`${scope}\` and the \`x-api-key\` of the same client, together.`,
  either: (scope: string) => `**Authentication:** a bearer access token with the scope \`${scope}\`, or the \`x-api-key\` of a client holding that scope (either is enough).`,
};

/** What the tags group, for the reference's sections; every tag a route uses needs one. */
const tagDescriptions: Record<string, string> = {
  Authentication: 'OAuth 2.0 client credentials: access tokens, and the keys that verify them.',
  Operations: 'Liveness, readiness and this API description; no credentials needed.',
  Mandates: "A biller's authority to deduct from an employee's pay, and asking payroll to enable it.",
  Payments: "Payment requests on a mandate, each targeted at a pay date of the employee's payroll.",
  Schedules: 'Instalment plans on a mandate: one payment request per instalment.',
  Payouts: 'Transfers of collected money to a biller, with the payment requests they settle.',
  Events: "What happened to a biller's resources: the payloads its webhooks carry, to catch up from.",
  Webhooks: 'Endpoints that receive signed event notifications.',
  Availability: 'Whether a person can pay by salary deduction, and through which employment.',
  Payrolls: 'Payroll information and the employees a payroll provider keeps on its payrolls.',
  'Salary deduction exchange': 'What payroll providers fetch (deduction data, instruction files) and report back (deductions made).',
  Reports: 'Reconciliation of what was asked, deducted and paid out.',
  Clients: 'Operators: API clients, their credentials and their status.',
  Administration: "Operators: an installation's bank holidays, pay calendars and employees.",
  'Payroll providers': 'Operators: the payroll providers that run payrolls, and how the service reaches them.',
  Employers: 'Operators: employers and their salary-deduction opt-in status, with its history.',
  'Collection accounts': 'Operators: the accounts employers remit deducted money into, one active per currency.',
  'Beneficiary accounts': "Operators: where billers' payouts are paid, one active account per biller and currency.",
  Runs: 'Operators: nightly runs, re-runs, reconciliation runs and payout runs as the database recorded them, finished or not.',
  Cash: 'Operators: bank statements of the collection accounts, credits matched to remittances, and the exceptions queue.',
  Sandbox: 'Sandbox billers: simulation operations that drive a sandbox pay date through lock, provider pull, confirmation and payout.',
};

const API_DESCRIPTION = `Salary deduction: billers collect repayments directly from an employee's pay, through the employer's payroll provider.

**Authentication.** Every client gets a client id and secret and an API key. Exchange the id and secret for an access token at \`POST /oauth2/token\` (OAuth 2.0 client credentials, form body or HTTP Basic); send it as \`Authorization: Bearer <token>\` together with the API key as \`x-api-key\`. Each operation names the scope it needs.

**Changes are idempotent.** Every \`POST\` takes an \`Idempotency-Key\` (a UUID): a retry with the same key answers what the first call answered and does nothing twice.

**Errors** are RFC 9457 problem details (\`application/problem+json\`): \`type\` identifies the problem by a code the ProblemDetails schema lists with its title (\`x-problem-codes\`), \`errors\` lists invalid fields by JSON pointer. The token endpoint answers RFC 6749 errors instead.

**Lists** are pages, newest first: follow \`paging.after\` / \`paging.before\` with the \`after\` / \`before\` query parameters.

**Rate limits** apply per client (\`RateLimit-*\` headers; 429 with \`Retry-After\` when exceeded).`;

/**
 * Names a schema had before it took the interface document's name: a client generated from an earlier
 * version still finds them, as the same schema. Each is listed in docs/api-changelog.md.
 */
const SCHEMA_ALIASES: Readonly<Record<string, { of: string; since: string }>> = {
  BeneficiaryAccount: { of: 'BeneficiaryAccountResponse', since: '1.1.0' },
  EmployeePayroll: { of: 'Employee', since: '1.1.0' },
};

function withAliases(schemas: Record<string, Json>): Record<string, Json> {
  const out = { ...schemas };
  for (const [alias, { of, since }] of Object.entries(SCHEMA_ALIASES)) {
    const target = schemas[of];
    if (target === undefined) throw new Error(`the schema alias ${alias} names ${of}, which the document does not have`);
    if (schemas[alias] !== undefined) throw new Error(`the schema alias ${alias} is also a schema of its own`);
    out[alias] = {
      $ref: `#/components/schemas/${of}`,
      description: `The name of ${of} before ${since}: the same schema, kept for clients generated before then.`,
      example: target.example,
    };
  }
  return out;
}

/** An event the service sends to webhook endpoints, published under the document's `webhooks`. */
export interface WebhookSpec {
  type: string;
  summary: string;
  payload: z.ZodType;
  example: unknown;
}

const WEBHOOK_HEADERS = [
  {
    name: 'webhook-id',
    description: "The event's id: the same on every delivery and retry of the event, so a receiver can drop a repeat.",
    example: '0193a4f6-9f4a-7b99-8b68-0c2d4e6f7a10',
  },
  {
    name: 'webhook-timestamp',
    description: 'When this delivery was signed, in seconds since the Unix epoch; refuse one far from your clock (Standard Webhooks allow 5 minutes).',
    example: '1795658404',
  },
  {
    name: 'webhook-signature',
    description:
      '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` keyed with the endpoint secret (`whsec_...`, base64 after the prefix); during a secret rotation two signatures, space-separated, and either verifying is enough. Any Standard Webhooks library verifies it.',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
];

/** The `webhooks` of the document: each event type as the request the service makes to an endpoint. */
function webhookOperations(webhooks: readonly WebhookSpec[], toSchema: (schema: z.ZodType, io: Io) => Json): Record<string, unknown> {
  return Object.fromEntries(
    webhooks.map((webhook) => [
      webhook.type,
      {
        post: {
          operationId: `webhook_${webhook.type.replace('.', '_')}`,
          summary: webhook.summary,
          description:
            `Sent to every enabled endpoint of the biller subscribed to \`${webhook.type}\` (or to all events), as a JSON body signed the Standard Webhooks way. ` +
            'Deliveries are at least once: answer any 2xx once the event is stored, and use the event id (`webhook-id`) to drop a repeat. ' +
            'Anything else, or no answer within the timeout, is retried with backoff; the same payload is kept for GET /events.',
          tags: ['Webhooks'],
          security: [],
          parameters: WEBHOOK_HEADERS.map((header) => ({
            name: header.name,
            in: 'header',
            required: true,
            description: header.description,
            schema: { type: 'string', example: header.example },
          })),
          requestBody: { required: true, content: { 'application/json': { schema: toSchema(webhook.payload, 'output'), example: webhook.example } } },
          responses: {
            '2XX': { description: 'Received: the delivery is done' },
            default: { description: 'Not received (any other status, or none in time): the delivery is retried with backoff' },
          },
        },
      },
    ]),
  );
}

/** OpenAPI 3.1 document built from the same zod schemas that validate requests. */
export function buildOpenApiDocument(specs: readonly RouteSpec[], options: { serverUrl: string; largestBodyBytes: number; webhooks?: readonly WebhookSpec[] }) {
  const components = new ComponentCollector();
  const toSchema = (schema: z.ZodType, io: Io) => components.convert(schema, io);
  const problemContent = (example: { example?: unknown }) => ({
    'application/problem+json': { schema: toSchema(problemDetailsSchema, 'output'), ...example },
  });
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const derived = derivedResponses(spec, options.largestBodyBytes);
    const statuses = [...new Set([...Object.keys(spec.responses).map(Number), ...derived.keys()])].sort((a, b) => a - b);
    const responses: Record<string, unknown> = {};
    for (const status of statuses) {
      const own = spec.responses[status];
      const kinds = derived.get(status) ?? [];
      const reasons = [...(own ? [own.description] : []), ...kinds.map((kind) => kind.reason)];
      // A status only the kind of route answers shows what it answers; the route's own refusals
      // are its service's, whose problem types the component's example does not pretend to know.
      const example = own === undefined && kinds[0] ? { example: kinds[0].example.toBody() } : {};
      const content: Record<string, unknown> = {
        ...(own?.schema ? { [own.contentType ?? 'application/json']: { schema: toSchema(own.schema, 'output') } } : {}),
        ...Object.fromEntries((own?.alternatives ?? []).map((alternative) => [alternative.contentType, { schema: toSchema(alternative.schema, 'output') }])),
        // Every refusal of the HTTP layer and every domain error is a problem (plugins/errors.ts).
        ...(status >= 400 && (kinds.length > 0 || !own?.schema) ? problemContent(example) : {}),
      };
      responses[String(status)] = {
        description: describeReasons(reasons),
        ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
        ...(Object.keys(content).length > 0 ? { content } : {}),
      };
    }
    const body = spec.body
      ? { contentType: 'application/json', schema: spec.body instanceof z.ZodOptional ? spec.body.unwrap() : spec.body, required: !bodyIsOptional(spec.body) }
      : spec.documentedBody
        ? { ...spec.documentedBody, required: true }
        : undefined;
    paths[openApiPath(spec.url)] ??= {};
    paths[openApiPath(spec.url)]![spec.method.toLowerCase()] = {
      operationId: spec.operationId,
      summary: spec.summary,
      description: spec.auth.kind === 'none' ? spec.description : `${spec.description}\n\n${authDescriptions[spec.auth.kind](spec.auth.scope)}`,
      tags: spec.tags,
      parameters: parameters(spec, toSchema),
      ...(body
        ? {
            requestBody: {
              required: body.required,
              // An optional body is described by what it holds when sent; `required` says it may be left out.
              content: { [body.contentType]: { schema: toSchema(body.schema as z.ZodType, 'input') } },
            },
          }
        : {}),
      ...(spec.streamedBody
        ? {
            requestBody: {
              required: true,
              description: spec.streamedBody.description,
              content: { [spec.streamedBody.contentType]: { schema: { type: 'string' }, example: spec.streamedBody.example } },
            },
          }
        : {}),
      ...(spec.auth.kind === 'none'
        ? { security: [] }
        : {
            security: spec.auth.kind === 'either' ? [{ bearer: [spec.auth.scope] }, { apiKey: [] }] : [{ bearer: [spec.auth.scope], apiKey: [] }],
            'x-required-scope': spec.auth.scope,
          }),
      security: spec.auth.kind === 'none' ? [] : spec.auth.kind === 'either' ? [{ oauth2: [spec.auth.scope] }, { apiKey: [] }] : [{ oauth2: [spec.auth.scope], apiKey: [] }],
      ...(spec.auth.kind === 'none' ? {} : { 'x-required-scope': spec.auth.scope }),
      responses,
    };
  }
  const webhooks = webhookOperations(options.webhooks ?? [], toSchema);
  const { schemas, nameOf } = components.finish();
  const document = {
    openapi: '3.1.0',
    info: { title: 'Salary deduction and payment collection service', version: API_VERSION, description: API_DESCRIPTION },
    servers: [{ url: options.serverUrl, description: 'This installation' }],
    tags: [...new Set(specs.flatMap((spec) => spec.tags))].map((name) => ({
      name,
      ...(tagDescriptions[name] === undefined ? {} : { description: tagDescriptions[name] }),
    })),
    components: {
      schemas: withAliases(schemas),
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials: the token endpoint takes the client id and secret as a form body or with HTTP Basic.',
          flows: {
            clientCredentials: { tokenUrl: `${options.serverUrl.replace(/\/$/, '')}/oauth2/token`, scopes: { ...scopeDescriptions } },
          },
        },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key issued with the client (shown once, at creation or rotation).' },
      },
    },
    paths,
    ...(Object.keys(webhooks).length > 0 ? { webhooks } : {}),
  };
  const named = rewriteRefs(document, (ref) => {
    const pending = PENDING_REF.exec(ref);
    return pending ? `#/components/schemas/${nameOf(pending[1] as Io, pending[2]!)}` : ref;
  });
  return normalizeSchemas(named);
}
