import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { consoleActor } from '../../../platform/audit/audit-service.ts';
import { queueNames } from '../../../platform/queue/job-catalogue.ts';
import { InvalidError, NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { redeliverEvent, RedeliveryRefused } from '../../webhooks/webhook-dispatch-service.ts';
import { enqueueDeliveries } from '../../webhooks/webhook-jobs.ts';
import { listTroubledEndpoints } from '../../webhooks/webhook-repository.ts';
import { actionForm, dataTable, statusBadge } from '../console-layout.ts';
import { consolePermits } from '../console-permissions.ts';
import { CONSOLE_FORM_LIMIT_BYTES, type ConsoleContext, type ConsolePageModule } from '../console-plugin.ts';
import { formatDuration, formatInstant } from '../console-format.ts';
import { findEndpointWithBiller, listEndpointAttempts, listRecentAttemptsOfEndpoints, type DeliveryAttemptRow } from '../console-webhook-repository.ts';
import { html, type Html } from '../html.ts';

const TROUBLED_ENDPOINTS_SHOWN = 100;
const ATTEMPTS_PER_ENDPOINT_IN_LIST = 5;
const ATTEMPTS_ON_ENDPOINT_PAGE = 100;

const uuid = z.string().uuid();
const redeliverForm = z.object({ endpointId: z.union([uuid, z.literal('')]).optional() });

interface EndpointTarget {
  id: string;
  status: 'enabled' | 'disabled';
}

/**
 * The redeliver button of an attempt's event: to the same endpoint while it is enabled, else to the
 * biller's enabled endpoints (a disabled endpoint takes nothing until it is enabled again). Only for
 * those who may redeliver; everyone else sees none.
 */
function redeliverButton(context: ConsoleContext, request: FastifyRequest, reply: FastifyReply, attempt: DeliveryAttemptRow, endpoint: EndpointTarget): Html | string {
  if (!consolePermits(context.session(request).role, 'redeliver_webhook')) return '';
  const toThisEndpoint = endpoint.status === 'enabled';
  return actionForm(
    `/console/webhooks/events/${attempt.event_id}/redeliver`,
    context.csrfToken(request, reply),
    toThisEndpoint ? 'Redeliver' : "Redeliver to the biller's enabled endpoints",
    toThisEndpoint ? html`<input type="hidden" name="endpointId" value="${endpoint.id}">` : '',
  );
}

function attemptsTable(caption: string, attempts: readonly DeliveryAttemptRow[], action: (attempt: DeliveryAttemptRow) => Html | string): Html {
  return dataTable(
    caption,
    ['When', 'Event', 'Attempt', 'Status code', 'Error', 'Duration', 'Delivery', 'Action'],
    attempts.map((attempt) => [
      formatInstant(attempt.attempted_at),
      html`${attempt.event_type}<br><code>${attempt.event_id}</code>`,
      attempt.attempt_number,
      attempt.status_code ?? '—',
      attempt.error ?? '—',
      formatDuration(attempt.latency_ms),
      statusBadge(attempt.delivery_status),
      action(attempt),
    ]),
    'no delivery attempts yet.',
  );
}

function endpointState(endpoint: { status: string; disabled_reason: string | null; failing_since: Date | null }): Html {
  if (endpoint.status === 'disabled') return html`${statusBadge('disabled')} ${endpoint.disabled_reason ?? ''}`;
  return html`${statusBadge('failing')} since ${formatInstant(endpoint.failing_since)}`;
}

/** Webhook endpoints in trouble across billers, their delivery attempts, and redelivery for operators. */
export const registerWebhookPages: ConsolePageModule = (app, context) => {
  const { db } = context.deps;

  app.get('/webhooks', async (request, reply) => {
    const endpoints = await listTroubledEndpoints(db, TROUBLED_ENDPOINTS_SHOWN);
    const attempts = await listRecentAttemptsOfEndpoints(
      db,
      endpoints.map((endpoint) => endpoint.id),
      ATTEMPTS_PER_ENDPOINT_IN_LIST,
    );
    const sections = endpoints.map((endpoint) => {
      const own = attempts.filter((attempt) => attempt.endpoint_id === endpoint.id);
      return html`<section class="endpoint" aria-labelledby="endpoint-${endpoint.id}">
<h2 id="endpoint-${endpoint.id}">${endpoint.biller_name}: <a href="/console/webhooks/endpoints/${endpoint.id}">${endpoint.url}</a></h2>
<p>${endpointState(endpoint)}. Deliveries waiting: ${endpoint.pending_deliveries}.</p>
${attemptsTable(`Latest delivery attempts to ${endpoint.url}`, own, (attempt) => redeliverButton(context, request, reply, attempt, endpoint))}
</section>`;
    });
    return context.page(request, reply, {
      title: 'Webhooks',
      section: 'webhooks',
      body: html`<p>Endpoints that are failing now (their latest delivery failed) or disabled, disabled first, then the longest failing. The same list on the command line: <code>deductions webhooks list</code> (<code>--all</code> adds the endpoints delivering, <code>--json</code> prints it as JSON).</p>
${endpoints.length === 0 ? html`<p class="empty">Every webhook endpoint is delivering.</p>` : sections}`,
    });
  });

  app.get('/webhooks/endpoints/:endpointId', async (request, reply) => {
    const { endpointId } = request.params as { endpointId: string };
    const endpoint = uuid.safeParse(endpointId).success ? await findEndpointWithBiller(db, endpointId) : undefined;
    if (!endpoint) throw new NotFoundError('webhook endpoint');
    const attempts = await listEndpointAttempts(db, endpoint.id, ATTEMPTS_ON_ENDPOINT_PAGE);
    const state = endpoint.deleted_at
      ? html`${statusBadge('deleted')} ${formatInstant(endpoint.deleted_at)}`
      : endpoint.status === 'disabled' || endpoint.failing_since
        ? endpointState(endpoint)
        : statusBadge('delivering');
    return context.page(request, reply, {
      title: `Webhook endpoint of ${endpoint.biller_name}`,
      section: 'webhooks',
      body: html`<dl class="facts">
<dt>Address</dt><dd>${endpoint.url}</dd>
<dt>State</dt><dd>${state}</dd>
<dt>Event types</dt><dd>${endpoint.event_types.length === 0 ? 'all' : endpoint.event_types.join(', ')}</dd>
<dt>Registered</dt><dd>${formatInstant(endpoint.created_at)}</dd>
</dl>
${attemptsTable(`The ${ATTEMPTS_ON_ENDPOINT_PAGE} latest delivery attempts`, attempts, (attempt) =>
  endpoint.deleted_at ? '' : redeliverButton(context, request, reply, attempt, endpoint),
)}
<p><a href="/console/webhooks">Back to webhooks</a></p>`,
    });
  });

  app.post(
    '/webhooks/events/:eventId/redeliver',
    { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleForm: { refused: 'The event was not delivered again' } } },
    async (request, reply) => {
      const session = context.requirePermission(request, 'redeliver_webhook');
      const { eventId } = request.params as { eventId: string };
      if (!uuid.safeParse(eventId).success) throw new NotFoundError('event');
      const form = redeliverForm.safeParse(request.body ?? {});
      if (!form.success) throw new InvalidError('invalid_endpoint', 'The endpoint id is not a valid id.');
      const endpointId = form.data.endpointId || undefined;
      const deliveries = await context.queues.queue(queueNames.webhookDeliveries);
      try {
        const redeliveries = await redeliverEvent(db, (deliveryIds) => enqueueDeliveries(deliveries, deliveryIds, { redelivery: true }), {
          eventId,
          endpointId,
          actor: consoleActor(session.email),
        });
        const where = redeliveries.map((redelivery) => redelivery.url).join(', ');
        return context.redirectWithNotice(reply, endpointId ? `/console/webhooks/endpoints/${endpointId}` : '/console/webhooks', `Event ${eventId} queued again to ${where}.`);
      } catch (error) {
        if (error instanceof RedeliveryRefused) throw new InvalidError('redelivery_refused', error.message);
        throw error;
      }
    },
  );
};
