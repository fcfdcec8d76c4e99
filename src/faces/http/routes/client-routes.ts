import { z } from 'zod';
import { clientActor } from '../../../platform/audit/audit-service.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { ConflictError } from '../../../platform/shared/domain-errors.ts';
import { pagingQuerySchema } from '../../../platform/shared/paging.ts';
import { clientApiKeyRotationSchema, clientEnvelopeSchema, clientSecretRotationSchema, clientsPageSchema } from '../../../directory/auth/client-resource.ts';
import { disableClient, enableClient, getClientResource, listClientResources, rotateClientApiKey, rotateClientSecret } from '../../../directory/auth/clients-service.ts';

// A non-UUID id names nothing, so it is a 404 like any other unknown id, not a validation error.
const clientParams = z.strictObject({ client_id: z.string() });

const changeBody = z.strictObject({ reason: z.string().trim().min(1).max(500) }).meta({
  id: 'ClientChangeRequest',
  description: 'Why the client is changed; kept in the audit log with the operator who called.',
  example: { reason: 'Secret exposed in a support ticket (INC-2231)' },
});

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const read = { kind: 'both', scope: 'admin:read', roles: ['operator'] } as const;
const write = { kind: 'both', scope: 'admin:write', roles: ['operator'] } as const;
const changeResponses = {
  404: { description: 'Client not found', ...problem },
};

/**
 * Operators manage clients. Every change is audited with the operator's client id and the reason,
 * and takes effect on every API process within seconds (see src/directory/auth/revocation.ts).
 */
export const registerClientRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/clients',
    operationId: 'list_clients',
    summary: 'List clients',
    description: 'Operators: every API client, newest first, one page at a time, with its role, scopes, status and API key ' + 'prefixes; never a secret.',
    tags: ['Clients'],
    auth: read,
    query: pagingQuerySchema,
    responses: {
      200: { description: 'A page of clients', schema: clientsPageSchema },
    },
    handler: async (ctx) => ({ status: 200, body: await listClientResources(deps.db, ctx.query) }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/clients/:client_id',
    operationId: 'get_client',
    summary: 'Get a client',
    description: 'Operators: get a client with its role, scopes, state and API key prefixes (never a secret)',
    tags: ['Clients'],
    auth: read,
    params: clientParams,
    responses: {
      200: { description: 'The client', schema: clientEnvelopeSchema },
      404: { description: 'Client not found', ...problem },
    },
    handler: async (ctx) => ({ status: 200, body: { client: await getClientResource(deps.db, ctx.params.client_id) } }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/clients/:client_id/disable',
    operationId: 'disable_client',
    summary: 'Disable a client',
    description:
      'Operators: disables a client; its tokens and API keys stop working within seconds. The reason is kept in ' +
      'the audit log with the operator. An operator cannot disable the client it calls with.',
    tags: ['Clients'],
    auth: write,
    params: clientParams,
    body: changeBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The client, now disabled', schema: clientEnvelopeSchema },
      409: { description: 'Already disabled, or the operator itself', ...problem },
      ...changeResponses,
    },
    effect: async (ctx, trx) => {
      // An operator that locks itself out can only be let back in from the CLI.
      if (ctx.params.client_id.toLowerCase() === ctx.caller.clientId) {
        throw new ConflictError('cannot-disable-self', 'An operator cannot disable the client it is calling with');
      }
      const client = await disableClient(trx, ctx.params.client_id, { actor: clientActor(ctx.caller.clientId), reason: ctx.body.reason });
      return { status: 200, body: { client } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/clients/:client_id/enable',
    operationId: 'enable_client',
    summary: 'Enable a client',
    description: 'Operators: lets a disabled client in again. The reason is kept in the audit log with the operator.',
    tags: ['Clients'],
    auth: write,
    params: clientParams,
    body: changeBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The client, enabled', schema: clientEnvelopeSchema },
      409: { description: 'The client is not disabled', ...problem },
      ...changeResponses,
    },
    effect: async (ctx, trx) => {
      const client = await enableClient(trx, ctx.params.client_id, { actor: clientActor(ctx.caller.clientId), reason: ctx.body.reason });
      return { status: 200, body: { client } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/clients/:client_id/rotate-secret',
    operationId: 'rotate_client_secret',
    summary: 'Rotate a client secret',
    description:
      'Operators: issues a new client secret, shown this once; the old secret and every token issued with it ' +
      'stop working. The reason is kept in the audit log with the operator.',
    tags: ['Clients'],
    auth: write,
    params: clientParams,
    body: changeBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The client and its new secret', schema: clientSecretRotationSchema },
      ...changeResponses,
    },
    effect: async (ctx, trx) => {
      const { client, clientSecret } = await rotateClientSecret(trx, ctx.params.client_id, {
        actor: clientActor(ctx.caller.clientId),
        reason: ctx.body.reason,
      });
      return { status: 200, body: { client, client_secret: clientSecret } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/clients/:client_id/rotate-api-key',
    operationId: 'rotate_client_api_key',
    summary: 'Rotate a client API key',
    description: 'Operators: issues a new API key, shown this once; every older key of the client stops working. The reason ' + 'is kept in the audit log with the operator.',
    tags: ['Clients'],
    auth: write,
    params: clientParams,
    body: changeBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The client and its new API key', schema: clientApiKeyRotationSchema },
      ...changeResponses,
    },
    effect: async (ctx, trx) => {
      const { client, apiKey } = await rotateClientApiKey(trx, ctx.params.client_id, {
        actor: clientActor(ctx.caller.clientId),
        reason: ctx.body.reason,
      });
      return { status: 200, body: { client, api_key: apiKey } };
    },
  });
};
