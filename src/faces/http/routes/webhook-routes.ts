import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { EVENT_TYPES, eventTypeSchema } from '../../../platform/events/event-resource.ts';
import { pagingQuerySchema } from '../../../platform/shared/paging.ts';
import { secretBoxFor } from '../../../platform/shared/secret-box.ts';
import { webhookEndpointEnvelopeSchema, webhookEndpointSecretEnvelopeSchema, webhookEndpointsPageSchema } from '../../webhooks/webhook-endpoint-resource.ts';
import { createWebhookEndpoint, deleteWebhookEndpoint, getWebhookEndpoint, listWebhookEndpoints, rotateWebhookSecret } from '../../webhooks/webhook-endpoint-service.ts';
import { systemResolver, type HostResolver } from '../../webhooks/webhook-target.ts';

const createEndpointBody = z
  .strictObject({
    url: z.string().min(1).max(2048),
    /** Omitted or empty: every event type. */
    event_types: z.array(eventTypeSchema).max(EVENT_TYPES.length).optional(),
    description: z.string().max(500).nullish(),
  })
  .meta({
    id: 'WebhookEndpointCreation',
    description: 'An HTTPS URL on a public address, and the event types to deliver there (left out or empty: every type).',
    example: {
      url: 'https://hooks.northwind-lending.example/deductions',
      event_types: ['payment_request.updated', 'payout.created'],
      description: 'Collections and payouts',
    },
  });

// A non-UUID id names nothing, so it is a 404 like any other unknown id, not a validation error.
const endpointParams = z.strictObject({ endpoint_id: z.string() });

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const auth = { kind: 'both', scope: 'webhooks:manage', roles: ['biller'] } as const;

/** The host resolver is injectable so tests can answer DNS themselves. */
export function webhookEndpointRoutes(options: { resolveHost?: HostResolver } = {}): RouteModule {
  const resolveHost = options.resolveHost ?? systemResolver;
  return (app, deps) => {
    defineRoute(app, {
      method: 'POST',
      url: '/webhook-endpoints',
      operationId: 'create_webhook_endpoint',
      summary: 'Register a webhook endpoint',
      description:
        "Registers an HTTPS URL to receive the caller's events, all of them or the listed `event_types`. " +
        'Deliveries are signed (Standard Webhooks); the answer carries the `whsec_` signing secret, shown this ' +
        'once. URLs that reach private addresses are refused.',
      tags: ['Webhooks'],
      auth,
      idempotencyKey: 'optional',
      body: createEndpointBody,
      responses: {
        201: { description: 'Endpoint registered', schema: webhookEndpointSecretEnvelopeSchema },
        409: {
          description: 'The caller already has as many endpoints as a biller may (`webhook_endpoint_limit`, 10 unless configured): delete one first',
          ...problem,
        },
        422: { description: 'A URL that is not https or reaches a private address', ...problem },
      },
      effect: async (ctx, trx) => {
        const endpoint = await createWebhookEndpoint(
          trx,
          {
            billerClientId: ctx.caller.clientId,
            url: ctx.body.url,
            description: ctx.body.description ?? null,
            eventTypes: ctx.body.event_types ?? [],
          },
          { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE, resolveHost },
          secretBoxFor(deps.config),
          { endpointsPerBiller: deps.config.WEBHOOK_ENDPOINTS_PER_BILLER },
        );
        return { status: 201, headers: { location: `/webhook-endpoints/${endpoint.id}` }, body: { webhook_endpoint: endpoint } };
      },
    });

    defineRoute(app, {
      method: 'GET',
      url: '/webhook-endpoints',
      operationId: 'list_webhook_endpoints',
      summary: 'List webhook endpoints',
      description: "The caller's webhook endpoints, newest first, one page at a time; never their secrets.",
      tags: ['Webhooks'],
      auth,
      query: pagingQuerySchema,
      responses: {
        200: { description: 'A page of endpoints', schema: webhookEndpointsPageSchema },
      },
      handler: async (ctx) => ({ status: 200, body: await listWebhookEndpoints(deps.db, ctx.caller.clientId, ctx.query) }),
    });

    defineRoute(app, {
      method: 'GET',
      url: '/webhook-endpoints/:endpoint_id',
      operationId: 'get_webhook_endpoint',
      summary: 'Get a webhook endpoint',
      description: "One of the caller's webhook endpoints; never its secret.",
      tags: ['Webhooks'],
      auth,
      params: endpointParams,
      responses: {
        200: { description: 'The endpoint', schema: webhookEndpointEnvelopeSchema },
        404: { description: 'Endpoint not found', ...problem },
      },
      handler: async (ctx) => ({
        status: 200,
        body: { webhook_endpoint: await getWebhookEndpoint(deps.db, ctx.caller.clientId, ctx.params.endpoint_id) },
      }),
    });

    defineRoute(app, {
      method: 'DELETE',
      url: '/webhook-endpoints/:endpoint_id',
      operationId: 'delete_webhook_endpoint',
      summary: 'Delete a webhook endpoint',
      description: 'Removes the endpoint; deliveries still queued for it are dropped.',
      tags: ['Webhooks'],
      auth,
      params: endpointParams,
      responses: {
        204: { description: 'Endpoint deleted' },
        404: { description: 'Endpoint not found', ...problem },
      },
      handler: async (ctx) => {
        await deps.db.transaction().execute((trx) => deleteWebhookEndpoint(trx, ctx.caller.clientId, ctx.params.endpoint_id));
        return { status: 204, body: undefined };
      },
    });

    defineRoute(app, {
      method: 'POST',
      url: '/webhook-endpoints/:endpoint_id/rotate-secret',
      operationId: 'rotate_webhook_endpoint_secret',
      summary: 'Rotate a webhook signing secret',
      description:
        'Issues a new signing secret, shown this once. The previous secret keeps signing beside it for 24 hours, ' + 'so the receiver can switch without missing a delivery.',
      tags: ['Webhooks'],
      auth,
      idempotencyKey: 'optional',
      params: endpointParams,
      responses: {
        200: { description: 'The endpoint with its new secret', schema: webhookEndpointSecretEnvelopeSchema },
        404: { description: 'Endpoint not found', ...problem },
      },
      effect: async (ctx, trx) => ({
        status: 200,
        body: { webhook_endpoint: await rotateWebhookSecret(trx, ctx.caller.clientId, ctx.params.endpoint_id, secretBoxFor(deps.config)) },
      }),
    });
  };
}

export const registerWebhookEndpointRoutes: RouteModule = webhookEndpointRoutes();
