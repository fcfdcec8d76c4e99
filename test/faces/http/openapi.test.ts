import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scopes } from '../../../src/directory/auth/scopes.ts';
import { apiProblemCodes, PROBLEM_TYPE_BASE, problemStatuses } from '../../../src/faces/http/problem.ts';
import type { RouteSpec } from '../../../src/faces/http/route.ts';
import { problemCodeEntry } from '../../../src/platform/shared/problem-codes.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let document: any;
beforeAll(async () => {
  t = await startTestApp();
  const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = response.json();
});
afterAll(async () => t.close());

/** Short enough for the reference's table of contents; the detail goes into the description. */
const MAX_SUMMARY_LENGTH = 60;

function refsOf(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsOf(n, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else if (key !== 'example') refsOf(value, found);
    }
  }
  return found;
}

function operations(): Array<{ where: string; operation: any }> {
  return Object.entries<any>(document.paths).flatMap(([path, methods]) =>
    Object.entries<any>(methods).map(([method, operation]) => ({ where: `${method.toUpperCase()} ${path}`, operation })),
  );
}

function component(ref: string | undefined): any {
  return ref ? document.components.schemas[ref.replace('#/components/schemas/', '')] : undefined;
}

/** Every zod schema a route is built from, nested ones included. */
function zodSchemasOf(spec: RouteSpec): z.ZodType[] {
  const roots = [spec.body, spec.query, spec.params, spec.documentedBody?.schema, ...Object.values(spec.responses).map((r) => r.schema)];
  const found = new Set<z.ZodType>();
  const visit = (schema: unknown) => {
    if (!schema || typeof schema !== 'object' || !('_zod' in schema) || found.has(schema as z.ZodType)) return;
    found.add(schema as z.ZodType);
    const def = (schema as z.ZodType)._zod.def as unknown as Record<string, unknown>;
    const children = [
      ...Object.values((def.shape as Record<string, unknown> | undefined) ?? {}),
      ...((def.options as unknown[] | undefined) ?? []),
      ...((def.items as unknown[] | undefined) ?? []),
      def.catchall,
      def.innerType,
      def.element,
      def.keyType,
      def.valueType,
      def.in,
      def.out,
      def.left,
      def.right,
      def.rest,
      typeof def.getter === 'function' ? (def.getter as () => unknown)() : undefined,
    ];
    children.forEach(visit);
  };
  roots.forEach(visit);
  return [...found];
}

describe('/openapi.json', () => {
  it('documents every route, with the salary-deduction interface operation ids, and only resolvable references', () => {
    expect(document.openapi).toBe('3.1.0');
    const operationIds = operations().map(({ operation }) => operation.operationId);
    expect(operationIds).toEqual(expect.arrayContaining(['create_new_payment_request', 'get_salary_deduction_data', 'issue_token']));
    expect(new Set(operationIds).size).toBe(operationIds.length);
    expect(Object.keys(document.paths).length).toBe(new Set(t.app.routeSpecs.map((s) => s.url)).size);
    const refs = refsOf(document);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(component(ref), ref).toBeDefined();
    }
    expect(JSON.stringify(document)).not.toContain('#/definitions/');
    expect(JSON.stringify(document)).not.toContain('#/x-io/');
    const payments = document.paths['/payments'].post;
    expect(payments['x-required-scope']).toBe('payments:write');
    expect(payments.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', required: true })]));
  });

  it('declares the OAuth2 client-credentials scheme with every scope described, and the x-api-key scheme', () => {
    const { oauth2, apiKey } = document.components.securitySchemes;
    expect(oauth2.type).toBe('oauth2');
    expect(oauth2.flows.clientCredentials.tokenUrl).toBe(`${t.config.PUBLIC_BASE_URL.replace(/\/$/, '')}/oauth2/token`);
    expect(Object.keys(oauth2.flows.clientCredentials.scopes).sort()).toEqual([...scopes].sort());
    for (const [scope, description] of Object.entries(oauth2.flows.clientCredentials.scopes)) {
      expect(description, scope).toMatch(/\w{3}/);
    }
    expect(apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
  });

  it('names on each operation the scope and the credentials its route requires', () => {
    for (const spec of t.app.routeSpecs) {
      const operation = document.paths[spec.url.replace(/:([A-Za-z_]+)/g, '{$1}')][spec.method.toLowerCase()];
      const where = `${spec.method} ${spec.url}`;
      if (spec.auth.kind === 'none') expect(operation.security, where).toEqual([]);
      else if (spec.auth.kind === 'both') expect(operation.security, where).toEqual([{ oauth2: [spec.auth.scope], apiKey: [] }]);
      else expect(operation.security, where).toEqual([{ oauth2: [spec.auth.scope] }, { apiKey: [] }]);
    }
  });

  it('documents the statuses that follow from the kind of route, as problems', () => {
    const payments = document.paths['/payments'].post.responses;
    // The Idempotency-Key: missing or malformed (400), the same key still running (409).
    expect(Object.keys(payments)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '404', '409', '413', '415', '422', '429', '503']));
    expect(payments['400'].description).toContain('Idempotency-Key');
    expect(payments['409'].description).toContain('Idempotency-Key');
    const problemOf = (response: any) => response?.content?.['application/problem+json']?.schema?.$ref;
    for (const { where, operation } of operations()) {
      const authenticated = operation.security.length > 0;
      const derived = [...(authenticated ? ['401', '403', '429', '503'] : []), '431'];
      if (operation.requestBody?.content['application/json']) derived.push('400', '413', '415', '422');
      for (const status of derived) expect(problemOf(operation.responses[status]), `${where} ${status}`).toBe('#/components/schemas/ProblemDetails');
      // Every refusal says what it answers with: a problem, or the body the route documents (RFC 6749 errors, readiness).
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (Number(status) >= 400) expect(Object.keys(response.content ?? {}), `${where} ${status}`).not.toEqual([]);
      }
    }
  });

  it('lists the problem codes the API answers, each with its title, statuses and description', () => {
    const problem = document.components.schemas.ProblemDetails;
    const listed = problem['x-problem-codes'];
    expect(Object.keys(listed)).toEqual([...apiProblemCodes]);
    expect(apiProblemCodes).toEqual(expect.arrayContaining(['validation-failed', 'reported-amount-over-limit', 'statement-rejected', 'deduction-record-voided']));
    expect(apiProblemCodes).not.toContain('statement-missing'); // the console's own
    for (const code of apiProblemCodes) {
      const { title, description } = problemCodeEntry(code);
      expect(listed[code], code).toEqual({ type: `${PROBLEM_TYPE_BASE}${code}`, title, status: problemStatuses(code), description });
      expect(problem.properties.type.description, code).toContain(`| \`${code}\` |`);
    }
  });

  it('gives every operation a short summary, a description and tags that are described', () => {
    const described = new Map<string, string | undefined>(document.tags.map((tag: any) => [tag.name, tag.description]));
    const missing: string[] = [];
    for (const { where, operation } of operations()) {
      if (!(operation.summary?.length > 0 && operation.summary.length <= MAX_SUMMARY_LENGTH)) missing.push(`${where}: summary of ${operation.summary?.length} characters`);
      if (!(operation.description?.length > operation.summary?.length)) missing.push(`${where}: no description beyond the summary`);
      for (const tag of operation.tags) if (!described.get(tag)) missing.push(`${where}: tag ${tag} has no description`);
    }
    expect(missing).toEqual([]);
  });

  it('gives every schema a description and an example, and every request and response body an example', () => {
    const missing: string[] = [];
    for (const [name, schema] of Object.entries<any>(document.components.schemas)) {
      if (!schema.description) missing.push(`schema ${name}: no description`);
      if (schema.example === undefined) missing.push(`schema ${name}: no example`);
    }
    for (const { where, operation } of operations()) {
      const bodies = [
        ...Object.entries<any>(operation.requestBody?.content ?? {}).map(([type, media]) => [`request ${type}`, media] as const),
        ...Object.entries<any>(operation.responses).flatMap(([status, response]) =>
          Object.entries<any>(response.content ?? {}).map(([type, media]) => [`${status} ${type}`, media] as const),
        ),
      ];
      for (const [what, media] of bodies) {
        const example = media.example ?? media.schema?.example ?? component(media.schema?.$ref)?.example;
        if (example === undefined) missing.push(`${where} ${what}: no example`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has examples that the schemas validating requests and building responses accept', () => {
    const invalid: string[] = [];
    let checked = 0;
    for (const spec of t.app.routeSpecs) {
      for (const schema of zodSchemasOf(spec)) {
        const meta = z.globalRegistry.get(schema) as { id?: string; example?: unknown } | undefined;
        if (meta?.example === undefined) continue;
        checked++;
        const result = schema.safeParse(meta.example);
        if (!result.success) invalid.push(`${meta.id ?? spec.operationId}: ${JSON.stringify(z.treeifyError(result.error))}`);
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect([...new Set(invalid)]).toEqual([]);
  });
});
