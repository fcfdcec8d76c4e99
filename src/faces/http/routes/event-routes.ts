import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { pageOf, pagingQuerySchema } from '../../../platform/shared/paging.ts';
import { uuidSchema, isUuid } from '../../../platform/shared/schemas.ts';
import { eventTypeSchema, toEventResource } from '../../../platform/events/event-resource.ts';
import { eventEnvelopeSchema, eventsPageSchema } from '../../webhooks/webhook-event-schemas.ts';
import { findEvent, listEvents } from '../../webhooks/event-log-repository.ts';

// A non-UUID id names nothing, so it is a 404 like any other unknown id, not a validation error.
const eventParams = z.strictObject({ event_id: z.string() });

const listEventsQuery = pagingQuerySchema.extend({
  type: eventTypeSchema.optional(),
  resource_id: uuidSchema.optional(),
});

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

export const registerEventRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/events/:event_id',
    operationId: 'get_event',
    summary: 'Get an event',
    description: 'One event of the caller: the same payload its webhook delivery carries.',
    tags: ['Events'],
    auth: { kind: 'both', scope: 'events:read', roles: ['biller'] },
    params: eventParams,
    responses: {
      200: { description: 'The event', schema: eventEnvelopeSchema },
      404: { description: 'Event not found', ...problem },
    },
    handler: async (ctx) => {
      const { event_id: eventId } = ctx.params;
      const event = isUuid(eventId) ? await findEvent(deps.db, ctx.caller.clientId, eventId) : undefined;
      if (!event) throw new NotFoundError(`Event ${eventId}`);
      return { status: 200, body: { event: toEventResource(event) } };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/events',
    operationId: 'list_events',
    summary: 'List events',
    description:
      "The caller's events, newest first, one page at a time; filter by type or by the resource they concern. A " + 'webhook receiver that was down catches up from here.',
    tags: ['Events'],
    auth: { kind: 'both', scope: 'events:read', roles: ['biller'] },
    query: listEventsQuery,
    responses: {
      200: { description: 'A page of events', schema: eventsPageSchema },
    },
    handler: async (ctx) => {
      const { type, resource_id, ...paging } = ctx.query;
      const rows = await listEvents(deps.db, ctx.caller.clientId, { type, resourceId: resource_id }, paging);
      const { items, paging: page } = pageOf(rows, paging);
      return { status: 200, body: { events: items.map(toEventResource), paging: page } };
    },
  });
};
