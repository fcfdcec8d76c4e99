import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

function refsOf(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsOf(n, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refsOf(value, found);
    }
  }
  return found;
}

describe('/openapi.json', () => {
  it('documents every route, with the salary-deduction interface operation ids, and only resolvable references', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.0.3');
    const operations = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((methods) =>
      Object.values(methods).map((operation) => operation.operationId),
    );
    expect(operations).toEqual(expect.arrayContaining(['create_new_payment_request', 'get_salary_deduction_data', 'issue_token']));
    expect(new Set(operations).size).toBe(operations.length);
    expect(Object.keys(document.paths).length).toBe(new Set(t.app.routeSpecs.map((s) => s.url)).size);
    const refs = refsOf(document);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(document.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
    expect(JSON.stringify(document)).not.toContain('#/definitions/');
    const payments = document.paths['/payments'].post;
    expect(payments['x-required-scope']).toBe('payments:write');
    expect(payments.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', required: true })]));
  });
});
