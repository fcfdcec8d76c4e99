import { connect } from 'node:net';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopes } from '../../../src/directory/auth/scopes.ts';
import {
  createBiller,
  createEmploymentWorld,
  createMandateRow,
  createOperator,
  createPaymentRequestRow,
  createPayoutRow,
  createProviderClient,
} from '../../support/factories.ts';
import { captureLogs } from '../../support/log-capture.ts';
import { fetchToken, startTestApp, type Credentials, type TestApp } from '../../support/test-app.ts';

/**
 * Every operation of /openapi.json gets malformed requests: broken JSON, wrong media types, wrong
 * types and hostile values in every field, missing and extra fields, bad path and query values,
 * oversized bodies, and raw HTTP the parser rejects. Whatever arrives, the answer is never 5xx,
 * every 4xx is problem+json whose `status` is the HTTP status (the token endpoint answers in the
 * RFC 6749 shape its OpenAPI entry documents), and every status is one the operation's entry
 * documents.
 */

const SEED = 20_260_611;
const BODY_LIMIT_BYTES = 16 * 1024;

type Json = any;
type Role = 'biller' | 'payroll_provider' | 'operator';
interface Operation {
  method: string;
  path: string;
  operationId: string;
  op: Json;
}
interface Case {
  label: string;
  request: InjectOptions;
}

let t: TestApp;
let doc: Json;
const logs = captureLogs('warn');
const headersByRole = {} as Record<Role, Record<string, string>>;
/** Field and parameter values that name real fixtures, so mutations get past lookups to SQL. */
const known: Record<string, unknown> = {};
let failures: string[] = [];
/** Operations whose baseline body was accepted: their mutations reach the service, not just the schema. */
const accepted = new Set<string>();
let casesSent = 0;

beforeAll(async () => {
  t = await startTestApp({
    env: {
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      AVAILABILITY_CHECKS_PER_MINUTE: '1000000',
      AVAILABILITY_CHECKS_BURST: '1000000',
      BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES),
    },
    logger: logs.logger,
  });
  const world = await createEmploymentWorld(t.db);
  const clients: Record<Role, Credentials> = {
    biller: await createBiller(t.db, [...scopes]),
    payroll_provider: await createProviderClient(t.db, world.provider.id),
    operator: await createOperator(t.db),
  };
  await t.db
    .updateTable('clients')
    .set({ scopes: [...scopes] })
    .execute();
  for (const role of Object.keys(clients) as Role[]) {
    headersByRole[role] = { authorization: `Bearer ${await fetchToken(t.app, clients[role])}`, 'x-api-key': clients[role].apiKey };
  }
  const mandate = await createMandateRow(t.db, {
    billerClientId: clients.biller.clientId,
    employeeId: world.employee.id,
    payrollId: world.payroll.id,
  });
  const payment = await createPaymentRequestRow(t.db, { mandate });
  const payout = await createPayoutRow(t.db, { billerClientId: clients.biller.clientId });
  const payDate = await t.db.selectFrom('pay_dates').selectAll().where('payroll_id', '=', world.payroll.id).orderBy('pay_date').executeTakeFirstOrThrow();
  Object.assign(known, {
    mandate_id: mandate.id,
    payment_id: payment.id,
    payout_id: payout.id,
    payroll_id: world.payroll.id,
    employee_id: world.employee.id,
    pay_date: payDate.pay_date,
    pay_period: payDate.pay_period,
    currency: 'GBP',
    national_registration_number: world.employee.national_registration_number,
    date_of_birth: world.employee.date_of_birth,
    given_name: world.employee.given_name,
    family_name: world.employee.family_name,
    url: 'https://hooks.example.com/deductions',
  });
  doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(async () => t?.close());

// ---------------------------------------------------------------------------------------------
// Reading the OpenAPI document

function resolve(schema: Json): Json {
  let s = schema ?? {};
  for (let hops = 0; hops < 20; hops++) {
    if (s.$ref) s = doc.components.schemas[s.$ref.replace('#/components/schemas/', '')];
    else if (s.allOf?.length === 1) s = { ...s.allOf[0], ...(s.nullable ? { nullable: true } : {}) };
    else return s;
  }
  return s;
}

/** The non-null shapes a value may take (OpenAPI 3.1: null is a type of its own, or one of a `type` list). */
function alternatives(schema: Json): Json[] {
  const union = schema.anyOf ?? schema.oneOf;
  const options: Json[] = union ? union.map(resolve).flatMap((option: Json) => ((option.anyOf ?? option.oneOf) ? alternatives(option) : [option])) : [schema];
  return options
    .filter((o: Json) => o.type !== 'null' && o.const !== null && !(Array.isArray(o.enum) && o.enum.length === 1 && o.enum[0] === null))
    .map((o: Json) => (Array.isArray(o.type) ? { ...o, type: o.type.find((type: string) => type !== 'null') } : o));
}

const patternSamples = new Map<string, string>();
function matching(pattern: string): string {
  if (!patternSamples.has(pattern)) {
    patternSamples.set(pattern, fc.sample(fc.stringMatching(new RegExp(pattern)), { seed: SEED, numRuns: 1 })[0]!);
  }
  return patternSamples.get(pattern)!;
}

/** A value the schema accepts (as far as a schema can say); `requiredOnly` leaves optional fields out. */
function sample(schema: Json, name: string, requiredOnly: boolean, depth = 0): unknown {
  if (name in known) return known[name];
  const s = alternatives(resolve(schema))[0] ?? {};
  if (depth > 12) return null;
  if (s.enum) return s.enum.find((v: unknown) => v !== null);
  if (s.const !== undefined) return s.const;
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, property] of Object.entries<Json>(s.properties ?? {})) {
        if (!requiredOnly || (s.required ?? []).includes(key)) out[key] = sample(property, key, requiredOnly, depth + 1);
      }
      if (!s.properties && s.additionalProperties && !requiredOnly) out.note = sample(s.additionalProperties, 'note', requiredOnly, depth + 1);
      return out;
    }
    case 'array':
      return Array.from({ length: Math.max(1, s.minItems ?? 0) }, () => sample(s.items, name, requiredOnly, depth + 1));
    case 'integer':
    case 'number':
      return Math.min(Math.max(1, s.minimum ?? 1), s.maximum ?? 1);
    case 'boolean':
      return false;
    case 'string':
      if (s.format === 'uuid') return crypto.randomUUID();
      if (s.format === 'date') return known.pay_date;
      if (s.format === 'date-time') return new Date().toISOString();
      if (s.format === 'email') return 'alex.taylor@example.com';
      if (s.pattern) return matching(s.pattern);
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    default:
      return 'x';
  }
}

/** Every node below the root of a value, as a path: what a mutation can replace or remove. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.length === 0 ? [] : [[...prefix, 0], ...paths(value[0], [...prefix, 0])];
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, child]) => [[...prefix, key], ...paths(child, [...prefix, key])]);
  }
  return [];
}

function getAt(value: any, path: Array<string | number>): unknown {
  return path.reduce((node, key) => node?.[key], value);
}

const RAW = '__raw_json_value__';

/**
 * The required-only body with one path set: containers missing on the way come from the full
 * sample, so every other field stays valid and the mutated one is what the service sees. `raw` is
 * JSON text spliced in verbatim (1e309, 2^63 and deep nesting cannot go through JSON.stringify).
 */
function bodyWith(base: unknown, full: unknown, path: Array<string | number>, change: { raw: string } | { remove: true }): string {
  const body = structuredClone(base) as any;
  let node = body;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    if (node[key] === undefined || node[key] === null) node[key] = structuredClone(getAt(full, path.slice(0, i + 1)));
    node = node[key];
  }
  const last = path[path.length - 1]!;
  if ('remove' in change) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
    return JSON.stringify(body);
  }
  node[last] = RAW;
  return JSON.stringify(body).replace(JSON.stringify(RAW), () => change.raw);
}

// ---------------------------------------------------------------------------------------------
// Hostile values

const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

const hostileJson: Array<[string, string]> = [
  ['null', 'null'],
  ['true', 'true'],
  ['a string', '"x"'],
  ['an empty string', '""'],
  ['zero', '0'],
  ['-1', '-1'],
  ['1.5', '1.5'],
  ['the largest amount a JSON number carries exactly', '9999999999999.99'],
  ['the largest amount, negated', '-9999999999999.99'],
  ['the largest whole amount of minor units', '999999999999999'],
  ['2^53+1', '9007199254740993'],
  ['2^63', '9223372036854775808'],
  ['-2^63-1', '-9223372036854775809'],
  ['1e309', '1e309'],
  ['-1e309', '-1e309'],
  ['1e-400', '1e-400'],
  ['an empty array', '[]'],
  ['an empty object', '{}'],
  ['NUL', '"\\u0000"'],
  ['NUL inside', '"ab\\u0000cd"'],
  ['a NUL key', '{"a\\u0000b": 1}'],
  ['a lone surrogate', '"\\ud800"'],
  ['a lone surrogate key', '{"\\udfff": 1}'],
  ['unicode', JSON.stringify('Zoë 👩‍💼 ẞ مرحبا \u202e\ufeff\u2028')],
  ['10k characters', JSON.stringify('a'.repeat(10_000))],
  ['an impossible date', '"2026-02-30"'],
  ['year 0', '"0000-01-01"'],
  ['an instant in year 0', '"0000-01-01T00:00:00Z"'],
  ['an instant past year 9999', '"9999-12-31T23:59:59-23:59"'],
  ['-infinity', '"-infinity"'],
  ['a nested array 5000 deep', deepArray(5000)],
];

/** Values derived from the field's valid one: they pass a format check only if NUL slips by. */
function derived(valid: unknown): Array<[string, string]> {
  if (typeof valid === 'string') {
    return [
      ['the valid value with NUL', JSON.stringify(`${valid}\u0000`)],
      ['the valid value with a lone surrogate', JSON.stringify(`${valid}\ud83d`)],
    ];
  }
  if (typeof valid === 'number')
    return [
      ['the valid value negated', String(-valid)],
      ['the valid value plus 0.5', String(valid + 0.5)],
    ];
  return [];
}

/** A few random JSON values per field, reproducible through the seed. */
function randomJson(count: number, seed: number): Array<[string, string]> {
  return fc
    .sample(fc.oneof(fc.jsonValue(), fc.string({ unit: 'binary' }), fc.double()), { seed, numRuns: count })
    .map((value, i) => [`random value ${i}`, JSON.stringify(value) ?? 'null']);
}

const hostileQueryValues: Array<[string, string]> = [
  ['empty', ''],
  ['a word', 'x'],
  ['-1', '-1'],
  ['1.5', '1.5'],
  ['2^63', '9223372036854775808'],
  ['1e309', '1e309'],
  ['NaN', 'NaN'],
  ['NUL', '%00'],
  ['NUL inside', 'a%00b'],
  ['10k characters', 'a'.repeat(10_000)],
  ['an impossible date', '2026-02-30'],
  ['year 0', '0000-01-01'],
  ['an emoji', '%F0%9F%92%A9'],
  ['an encoded lone surrogate', '%ED%A0%80'],
  ['a malformed escape', '%zz'],
];

const hostilePathValues: Array<[string, string]> = [
  ['not a UUID', 'not-a-uuid'],
  ['101 characters', 'a'.repeat(101)],
  ['10k characters', 'a'.repeat(10_000)],
  ['NUL', '%00'],
  ['a UUID with NUL', `${crypto.randomUUID()}%00`],
  ['a malformed escape', '%zz'],
  ['an emoji', '%F0%9F%92%A9'],
  ['an encoded lone surrogate', '%ED%A0%80'],
  ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
  ['the max UUID', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
  ['a UUID of no RFC variant', '12345678-1234-1234-1234-123456789012'],
  ['an upper-case UUID', crypto.randomUUID().toUpperCase()],
];

// ---------------------------------------------------------------------------------------------
// Building the requests of one operation

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(methods)) out.push({ method: method.toUpperCase(), path, operationId: op.operationId, op });
  }
  // State-changing operations without a body (revoke, cancel, delete) last, so they do not close
  // the fixtures the others stand on.
  const destructive = (o: Operation) => o.method === 'DELETE' || (o.method === 'POST' && !o.op.requestBody);
  return [...out.filter((o) => !destructive(o)), ...out.filter(destructive)];
}

function roleOf(operation: Operation): Role {
  const spec = t.app.routeSpecs.find((s) => s.operationId === operation.operationId)!;
  return spec.auth.kind === 'none' ? 'biller' : ((spec.auth.roles?.[0] ?? 'biller') as Role);
}

function isTokenEndpoint(operation: Operation): boolean {
  return resolveRef(operation.op.responses?.['400']?.content?.['application/json']?.schema) === 'OAuthError';
}

function resolveRef(schema: Json): string | undefined {
  return schema?.$ref?.replace('#/components/schemas/', '');
}

function parametersOf(operation: Operation, where: 'path' | 'query'): Json[] {
  return (operation.op.parameters ?? []).filter((p: Json) => p.in === where);
}

function urlOf(operation: Operation, pathValues: Record<string, string> = {}, query?: string): string {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name in pathValues ? pathValues[name]! : encodeURIComponent(String(known[name] ?? crypto.randomUUID())),
  );
  const baseQuery = parametersOf(operation, 'query')
    .filter((p) => p.required)
    .map((p) => `${p.name}=${encodeURIComponent(String(sample(p.schema, p.name, true)))}`)
    .join('&');
  const fullQuery = query ?? baseQuery;
  return fullQuery ? `${path}?${fullQuery}` : path;
}

function headersOf(operation: Operation, extra: Record<string, string> = {}): Record<string, string> {
  const idempotent = (operation.op.parameters ?? []).some((p: Json) => p.name === 'Idempotency-Key');
  return {
    ...(operation.op.security?.length ? headersByRole[roleOf(operation)] : {}),
    ...(idempotent ? { 'idempotency-key': crypto.randomUUID() } : {}),
    ...extra,
  };
}

function jsonCase(operation: Operation, label: string, payload: string, contentType = 'application/json'): Case {
  return {
    label,
    request: { method: operation.method as any, url: urlOf(operation), headers: headersOf(operation, { 'content-type': contentType }), payload },
  };
}

/**
 * The body mutations start from: the required fields only, or every field when the service needs
 * more than the schema requires (an identity to check, one of two shapes). Whichever the service
 * accepts, so a mutation of one field meets the code behind validation, down to SQL.
 */
async function baseBody(operation: Operation, schema: Json): Promise<unknown> {
  const candidates = [sample(schema, '', true), sample(schema, '', false)];
  for (const candidate of candidates) {
    const response = await t.app.inject(jsonCase(operation, 'baseline', JSON.stringify(candidate)).request);
    if (response.statusCode < 300) {
      accepted.add(operation.operationId);
      return candidate;
    }
  }
  return candidates[0];
}

async function bodyCases(operation: Operation, index: number): Promise<Case[]> {
  const schema = operation.op.requestBody?.content?.['application/json']?.schema;
  if (!schema) return [];
  const base = await baseBody(operation, schema);
  const full = sample(schema, '', false);
  const valid = JSON.stringify(base);
  const cases: Case[] = [
    jsonCase(operation, 'invalid JSON: truncated', valid.slice(0, -1)),
    jsonCase(operation, 'invalid JSON: trailing comma', valid.replace(/}$/, ',}')),
    jsonCase(operation, 'invalid JSON: bare word', 'nul'),
    jsonCase(operation, 'invalid JSON: raw NUL byte', `{"a":"\u0000"}`),
    jsonCase(operation, 'invalid JSON: lone brace', '{'),
    jsonCase(operation, 'empty body', ''),
    jsonCase(operation, 'body is null', 'null'),
    jsonCase(operation, 'body is an array', '[]'),
    jsonCase(operation, 'body is a string', '"x"'),
    jsonCase(operation, 'body is 1e309', '1e309'),
    jsonCase(operation, 'body nested 100k deep', deepArray(100_000)),
    jsonCase(operation, 'extra root field', JSON.stringify({ ...(base as object), unexpected_field: 1 })),
    jsonCase(operation, '__proto__ field', valid.replace(/^\{/, '{"__proto__":{"polluted":true},')),
    jsonCase(operation, 'constructor.prototype field', valid.replace(/^\{/, '{"constructor":{"prototype":{"polluted":true}},')),
    jsonCase(operation, 'oversized body', JSON.stringify({ pad: 'x'.repeat(BODY_LIMIT_BYTES) })),
    jsonCase(operation, 'content type text/plain', valid, 'text/plain'),
    jsonCase(operation, 'content type application/xml', '<a/>', 'application/xml'),
    jsonCase(operation, 'content type form', 'a=b', 'application/x-www-form-urlencoded'),
    jsonCase(operation, 'content type multipart', '--x\r\n\r\n--x--', 'multipart/form-data; boundary=x'),
    jsonCase(operation, 'content type +json without a parser', valid, 'application/merge-patch+json'),
    jsonCase(operation, 'content type with a charset', valid, 'application/json; charset=utf-8'),
    jsonCase(operation, 'content type in capitals', valid, 'APPLICATION/JSON'),
    { label: 'no content type', request: { method: operation.method as any, url: urlOf(operation), headers: headersOf(operation), payload: valid } },
    {
      label: 'content-length larger than the body',
      request: {
        method: operation.method as any,
        url: urlOf(operation),
        headers: headersOf(operation, { 'content-type': 'application/json', 'content-length': String(valid.length + 10) }),
        payload: valid,
      },
    },
  ];
  for (const [p, path] of paths(full).entries()) {
    const at = '/' + path.join('/');
    const validValue = getAt(full, path);
    cases.push(jsonCase(operation, `${at} missing`, bodyWith(base, full, path, { remove: true })));
    const values = [...hostileJson, ...derived(validValue), ...randomJson(2, SEED + index * 1000 + p)];
    for (const [name, raw] of values) cases.push(jsonCase(operation, `${at} = ${name}`, bodyWith(base, full, path, { raw })));
    const node = getAt(full, path);
    if (node && typeof node === 'object' && !Array.isArray(node)) {
      cases.push(jsonCase(operation, `${at} with an extra field`, bodyWith(base, full, [...path, 'unexpected_field'], { raw: '1' })));
    }
  }
  return cases;
}

function queryCases(operation: Operation): Case[] {
  const parameters = parametersOf(operation, 'query');
  const cases: Case[] = [];
  const request = (label: string, query: string): Case => ({
    label,
    request: { method: operation.method as any, url: urlOf(operation, {}, query), headers: headersOf(operation) },
  });
  const others = (name: string) =>
    parameters.filter((p) => p.required && p.name !== name).map((p) => `${p.name}=${encodeURIComponent(String(sample(p.schema, p.name, true)))}`);
  for (const parameter of parameters) {
    for (const [label, value] of hostileQueryValues) {
      cases.push(request(`query ${parameter.name} = ${label}`, [...others(parameter.name), `${parameter.name}=${value}`].join('&')));
    }
    cases.push(request(`query ${parameter.name} twice`, [...others(parameter.name), `${parameter.name}=1`, `${parameter.name}=2`].join('&')));
    cases.push(request(`query ${parameter.name} missing`, others(parameter.name).join('&')));
  }
  const all = parameters.filter((p) => p.required).map((p) => `${p.name}=${encodeURIComponent(String(sample(p.schema, p.name, true)))}`);
  cases.push(request('an unknown query parameter', [...all, 'unexpected_parameter=1'].join('&')));
  cases.push(request('a __proto__ query parameter', [...all, '__proto__=1'].join('&')));
  return cases;
}

function pathCases(operation: Operation): Case[] {
  return parametersOf(operation, 'path').flatMap((parameter) =>
    hostilePathValues.map(([label, value]) => ({
      label: `path ${parameter.name} = ${label}`,
      request: {
        method: operation.method as any,
        url: urlOf(operation, { [parameter.name]: value }),
        headers: headersOf(operation, operation.op.requestBody ? { 'content-type': 'application/json' } : {}),
        ...(operation.op.requestBody ? { payload: '{}' } : {}),
      },
    })),
  );
}

function headerCases(operation: Operation): Case[] {
  const payload = operation.op.requestBody ? { payload: '{}' } : {};
  const contentType: Record<string, string> = operation.op.requestBody ? { 'content-type': 'application/json' } : {};
  const variants: Array<[string, Record<string, string>]> = [
    ['an Idempotency-Key that is no UUID', { 'idempotency-key': 'not-a-key' }],
    ['an Idempotency-Key of 10k characters', { 'idempotency-key': 'k'.repeat(10_000) }],
    ['an Idempotency-Key in quotes', { 'idempotency-key': `"${crypto.randomUUID()}"` }],
    ['a bearer token of 10k characters', { authorization: `Bearer ${'a'.repeat(10_000)}` }],
    ['a Basic authorization', { authorization: 'Basic Zm9vOmJhcg==' }],
    ['an API key of 10k characters', { 'x-api-key': 'k'.repeat(10_000) }],
    ['an API key with unicode', { 'x-api-key': 'ключ' }],
  ];
  return variants.map(([label, headers]) => ({
    label,
    request: { method: operation.method as any, url: urlOf(operation), headers: headersOf(operation, { ...contentType, ...headers }), ...payload },
  }));
}

function methodCases(operation: Operation): Case[] {
  return (['PATCH', 'OPTIONS', 'TRACE'] as const)
    .filter((method) => !(method.toLowerCase() in doc.paths[operation.path]))
    .map((method) => ({ label: `method ${method}`, request: { method, url: urlOf(operation), headers: headersOf(operation) } }));
}

function tokenCases(operation: Operation): Case[] {
  const form = (label: string, payload: string, contentType = 'application/x-www-form-urlencoded', extra: Record<string, string> = {}): Case => ({
    label,
    request: { method: 'POST', url: operation.path, headers: { 'content-type': contentType, ...extra }, payload },
  });
  const id = crypto.randomUUID();
  return [
    form('form: NUL in client_id', `grant_type=client_credentials&client_id=%00&client_secret=s`),
    form('form: NUL after a UUID client_id', `grant_type=client_credentials&client_id=${id}%00&client_secret=s`),
    form('form: NUL in client_secret', `grant_type=client_credentials&client_id=${id}&client_secret=a%00b`),
    form('form: NUL in scope', `grant_type=client_credentials&client_id=${id}&client_secret=s&scope=payments%00`),
    form('form: NUL in grant_type', `grant_type=client%00credentials`),
    form('form: a lone surrogate', `grant_type=client_credentials&client_id=%ED%A0%80&client_secret=s`),
    form('form: a malformed escape', `grant_type=%zz&client_id=%&client_secret=%%`),
    form('form: fields twice', `grant_type=client_credentials&grant_type=x&client_id=${id}&client_id=${id}`),
    form('form: 10k characters', `grant_type=client_credentials&client_id=${'a'.repeat(10_000)}&client_secret=s`),
    form('form: empty', ''),
    form('form: oversized', `client_secret=${'x'.repeat(BODY_LIMIT_BYTES)}`),
    form('form sent as JSON', JSON.stringify({ grant_type: 'client_credentials' }), 'application/json'),
    form('invalid JSON', '{', 'application/json'),
    form('form sent as text', 'grant_type=client_credentials', 'text/plain'),
    form('Basic with a NUL', 'grant_type=client_credentials', undefined, { authorization: `Basic ${Buffer.from('\u0000:\u0000').toString('base64')}` }),
    form('Basic without a colon', 'grant_type=client_credentials', undefined, { authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` }),
    form('Basic that is not base64', 'grant_type=client_credentials', undefined, { authorization: 'Basic %%%' }),
  ];
}

// ---------------------------------------------------------------------------------------------
// Judging the answers

/** Why a response breaks the rules, or undefined when it keeps them. */
function violation(operation: Operation | undefined, status: number, contentType: string | undefined, body: string): string | undefined {
  if (status >= 500) return `answered ${status}: ${body.slice(0, 300)}`;
  if (status < 400) return undefined;
  const documented = operation?.op.responses?.[String(status)]?.content?.['application/json']?.schema;
  if (operation && isTokenEndpoint(operation) && resolveRef(documented) === 'OAuthError') {
    const parsed = tryParse(body);
    return contentType?.startsWith('application/json') && typeof parsed?.error === 'string' && typeof parsed?.error_description === 'string'
      ? undefined
      : `answered ${status} without an RFC 6749 error body: ${contentType} ${body.slice(0, 200)}`;
  }
  if (!/^application\/problem\+json(;|$)/.test(contentType ?? '')) return `answered ${status} as ${contentType}: ${body.slice(0, 200)}`;
  const problem = tryParse(body);
  if (typeof problem?.type !== 'string' || typeof problem?.title !== 'string' || problem?.status !== status) {
    return `answered ${status} with an incomplete problem: ${body.slice(0, 200)}`;
  }
  return undefined;
}

function tryParse(body: string): any {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

async function send(operation: Operation | undefined, c: Case): Promise<void> {
  casesSent++;
  const where = operation ? `${operation.method} ${operation.path}` : 'app';
  let response;
  try {
    response = await t.app.inject(c.request);
  } catch (error) {
    failures.push(`${where} | ${c.label}: inject threw ${String(error)}`);
    return;
  }
  const problem = violation(operation, response.statusCode, response.headers['content-type'] as string | undefined, response.body);
  if (problem) failures.push(`${where} | ${c.label}: ${problem}`);
  // A request in another method is another operation's (or none's) business.
  else if (operation && c.request.method === operation.method && !(String(response.statusCode) in operation.op.responses)) {
    failures.push(`${where} | ${c.label}: answered ${response.statusCode}, which its /openapi.json entry does not document`);
  }
}

/** A raw HTTP/1.1 exchange, for what the HTTP parser rejects before Fastify sees a request. */
function raw(port: number, text: string): Promise<{ status: number; contentType: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const response = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = response.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const contentType = headerLines
        .find((line) => /^content-type:/i.test(line))
        ?.split(':')[1]
        ?.trim();
      resolve({ status: Number(statusLine.split(' ')[1]), contentType, body: rest.join('\r\n\r\n') });
    });
    socket.end(text);
  });
}

// ---------------------------------------------------------------------------------------------

describe('route fuzz: every operation of /openapi.json', () => {
  it('never answers 5xx to malformed input, every 4xx is a problem with type, title and status, and every status is documented', async () => {
    failures = [];
    const all = operations();
    expect(all.length).toBeGreaterThanOrEqual(35);
    for (const [index, operation] of all.entries()) {
      const cases = isTokenEndpoint(operation)
        ? tokenCases(operation)
        : [...(await bodyCases(operation, index)), ...queryCases(operation), ...pathCases(operation), ...headerCases(operation), ...methodCases(operation)];
      for (const c of cases) await send(operation, c);
    }
    expect(casesSent).toBeGreaterThan(3000);
    // Deep enough to matter: these bodies were accepted as sent, so each mutation of one field
    // went past validation into the service and its SQL.
    expect([...accepted].sort()).toEqual(
      expect.arrayContaining([
        'create_mandate',
        'create_new_payment_request',
        'create_webhook_endpoint',
        'full_availability_check',
        'push_employee_deduction',
        'put_payroll_employee',
      ]),
    );
    expect(failures).toEqual([]);
    // A 5xx can hide behind a reply already sent: nothing may be logged at error level.
    expect(logs.errors().map((line) => line.msg)).toEqual([]);
    // Over 3,000 requests one after another: 77-109 s in a whole suite on two busy cores, so the limit
    // (there to catch a hang) leaves room.
  }, 300_000);

  it('answers what the HTTP parser and router reject as problems too', async () => {
    failures = [];
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as { port: number }).port;
    const exchanges: Array<[string, string, number]> = [
      ['a URL longer than the header limit', `GET /payments/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
      ['a header longer than the header limit', `GET /payments HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ['a path parameter over the router limit', `GET /payments/${'a'.repeat(5_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 414],
      ['a Content-Length that is no number', 'POST /payments HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
      ['Content-Length and chunked together', 'POST /payments HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
      ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400],
      ['an unknown method', 'FOO /payments HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['a malformed URL escape in the path', 'GET /payments/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400],
      ['no credentials (through the real server)', 'GET /payments HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 401],
    ];
    for (const [label, text, expected] of exchanges) {
      casesSent++;
      const response = await raw(port, text);
      const problem = violation(undefined, response.status, response.contentType, response.body);
      if (problem) failures.push(`raw HTTP | ${label}: ${problem}`);
      else if (response.status !== expected) failures.push(`raw HTTP | ${label}: answered ${response.status}, expected ${expected}`);
    }
    expect(failures).toEqual([]);
  });
});
