import { z } from 'zod';
import { bodyIsOptional, type RouteSpec } from './route.ts';
import { problemDetailsSchema } from './problem.ts';

type Json = unknown;

/**
 * zod writes named schemas (`.meta({ id })`) as local `#/definitions/X` references; OpenAPI wants
 * them once under `components.schemas`. Moves them there and rewrites the references. An input
 * shape that differs from the output shape of the same name is kept as `<name>Input`.
 */
class ComponentCollector {
  readonly schemas: Record<string, Json> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): Json {
    const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as Record<string, Json>;
    const definitions = (json.definitions ?? {}) as Record<string, Json>;
    delete json.definitions;
    const names = new Map<string, string>();
    for (const [name, definition] of Object.entries(definitions)) {
      const existing = this.schemas[name];
      const target = existing === undefined || JSON.stringify(existing) === JSON.stringify(definition) ? name : `${name}Input`;
      names.set(name, target);
    }
    const rewrite = (node: Json): Json => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (node && typeof node === 'object') {
        const out: Record<string, Json> = {};
        for (const [key, value] of Object.entries(node)) {
          out[key] =
            key === '$ref' && typeof value === 'string' && value.startsWith('#/definitions/')
              ? `#/components/schemas/${names.get(value.slice('#/definitions/'.length)) ?? value.slice(14)}`
              : rewrite(value);
        }
        return out;
      }
      return node;
    };
    for (const [name, definition] of Object.entries(definitions)) this.schemas[names.get(name)!] ??= rewrite(definition);
    return rewrite(json);
  }
}

function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function parameters(spec: RouteSpec, toSchema: (schema: z.ZodType, io: 'input' | 'output') => any) {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', spec.params], ['query', spec.query]] as const) {
    if (!schema) continue;
    const json = toSchema(schema as z.ZodType, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: property });
    }
  }
  if (spec.auth.kind !== 'none' && 'idempotencyKey' in spec) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: spec.idempotencyKey === 'required',
      schema: { type: 'string', format: 'uuid' },
    });
  }
  return out;
}

/** OpenAPI 3.0 document built from the same zod schemas that validate requests. */
export function buildOpenApiDocument(specs: readonly RouteSpec[], serverUrl: string) {
  const components = new ComponentCollector();
  const toSchema = (schema: z.ZodType, io: 'input' | 'output') => components.convert(schema, io) as any;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const path = openApiPath(spec.url);
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(spec.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema
          ? { content: { [response.contentType ?? 'application/json']: { schema: toSchema(response.schema, 'output') } } }
          : {}),
      };
    }
    if (spec.auth.kind !== 'none') {
      const problem = { content: { 'application/problem+json': { schema: toSchema(problemDetailsSchema, 'output') } } };
      responses['401'] ??= { description: 'Missing or invalid credentials', ...problem };
      responses['403'] ??= { description: 'Insufficient scope', ...problem };
      responses['429'] ??= { description: 'Rate limited', ...problem };
    }
    paths[path] ??= {};
    paths[path][spec.method.toLowerCase()] = {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: spec.tags,
      parameters: parameters(spec, toSchema),
      ...(spec.body
        ? {
            requestBody: {
              required: !bodyIsOptional(spec.body),
              // An optional body is described by what it holds when sent; `required` says it may be left out.
              content: { 'application/json': { schema: toSchema(spec.body instanceof z.ZodOptional ? spec.body.unwrap() : spec.body, 'input') } },
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
            security:
              spec.auth.kind === 'either'
                ? [{ bearer: [spec.auth.scope] }, { apiKey: [] }]
                : [{ bearer: [spec.auth.scope], apiKey: [] }],
            'x-required-scope': spec.auth.scope,
          }),
      responses,
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Salary deduction and payment collection service', version: '1.0.0' },
    servers: [{ url: serverUrl }],
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
    },
    paths,
  };
}
