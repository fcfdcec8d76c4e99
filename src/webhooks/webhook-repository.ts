import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { EventType } from '../db/tables.ts';
import { type PagingQuery } from '../shared/paging.ts';
import { applyPaging } from '../db/keyset-paging.ts';
import { eventPayloadSql } from '../payments/payment-event-repository.ts';
import { CLOSED_CIRCUIT, type EndpointCircuit } from './webhook-circuit-breaker.ts';

// Endpoints ----------------------------------------------------------------------------------------

export interface NewEndpoint {
  billerClientId: string;
  url: string;
  description: string | null;
  eventTypes: readonly EventType[];
  secret: string;
}

export async function insertEndpoint(db: Executor, endpoint: NewEndpoint) {
  return db
    .insertInto('webhook_endpoints')
    .values({
      biller_client_id: endpoint.billerClientId,
      url: endpoint.url,
      description: endpoint.description,
      event_types: [...endpoint.eventTypes],
      secret: endpoint.secret,
      previous_secret: null,
      previous_secret_expires_at: null,
      disabled_reason: null,
      failing_since: null,
      deleted_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Holds the biller's endpoint registrations until the transaction ends: two registrations at once
 * are counted one after the other, so neither can take the biller past its limit.
 */
export async function lockBillerEndpoints(db: Executor, billerClientId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${billerClientId}`}, 0))`.execute(db);
}

/** The biller's endpoints that have not been deleted, enabled or not: what its limit counts. */
export async function countEndpoints(db: Executor, billerClientId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('biller_client_id', '=', billerClientId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A biller's endpoint that has not been deleted; another biller's is as absent as a missing one. */
export async function findEndpoint(db: Executor, billerClientId: string, endpointId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', endpointId)
    .where('biller_client_id', '=', billerClientId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function findEndpointById(db: Executor, endpointId: string) {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function listEndpoints(db: Executor, billerClientId: string, paging: PagingQuery) {
  const query = db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('biller_client_id', '=', billerClientId)
    .where('deleted_at', 'is', null);
  return applyPaging(query, 'webhook_endpoints', paging).execute();
}

export async function markEndpointDeleted(db: Executor, billerClientId: string, endpointId: string) {
  return db
    .updateTable('webhook_endpoints')
    .set({ deleted_at: sql<Date>`now()` })
    .where('id', '=', endpointId)
    .where('biller_client_id', '=', billerClientId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
}

/** The current secret becomes the previous one (signing until `graceUntil`); an older one is dropped. */
export async function replaceEndpointSecret(
  db: Executor,
  billerClientId: string,
  endpointId: string,
  newSecret: string,
  graceUntil: Date,
) {
  return db
    .updateTable('webhook_endpoints')
    .set((eb) => ({ previous_secret: eb.ref('secret'), previous_secret_expires_at: graceUntil, secret: newSecret }))
    .where('id', '=', endpointId)
    .where('biller_client_id', '=', billerClientId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Every endpoint's stored secrets, row-locked: for re-sealing them under the current master key. */
export async function lockAllEndpointSecrets(db: Executor) {
  return db.selectFrom('webhook_endpoints').select(['id', 'secret', 'previous_secret']).orderBy('id').forUpdate().execute();
}

export async function updateEndpointSecrets(db: Executor, endpointId: string, secrets: { secret: string; previous_secret: string | null }) {
  await db.updateTable('webhook_endpoints').set(secrets).where('id', '=', endpointId).execute();
}

/** A success ends a failing streak and closes the endpoint's circuit. */
export async function clearEndpointFailing(db: Executor, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: null, consecutive_failures: 0, circuit_open_until: null, circuit_open_ms: null })
    .where('id', '=', endpointId)
    .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('consecutive_failures', '>', 0), eb('circuit_open_until', 'is not', null)]))
    .execute();
}

/** The endpoint's circuit, row-locked until the transaction ends: failures are counted one at a time. */
export async function lockEndpointCircuit(db: Executor, endpointId: string): Promise<EndpointCircuit> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(['consecutive_failures', 'circuit_open_until', 'circuit_open_ms'])
    .where('id', '=', endpointId)
    .forUpdate()
    .executeTakeFirst();
  return row ? circuitOfRow(row) : { ...CLOSED_CIRCUIT };
}

/** Starts the failing streak at this failure unless one is already running, and stores the circuit the failure left. */
export async function markEndpointFailing(db: Executor, endpointId: string, circuit: EndpointCircuit): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({
      failing_since: sql<Date>`coalesce(failing_since, now())`,
      consecutive_failures: circuit.consecutiveFailures,
      circuit_open_until: circuit.openUntil,
      circuit_open_ms: circuit.openMs,
    })
    .where('id', '=', endpointId)
    .execute();
}

/**
 * One delivery claims a half-open circuit to probe the endpoint: the circuit is held until
 * `leaseUntil` unless the probe's answer comes first. Compare-and-set on the value the caller saw
 * (every value is written from the application's clock, to the millisecond, so it compares equal),
 * so of two deliveries that saw the same half-open circuit exactly one claims it.
 */
export async function claimCircuitProbe(db: Executor, endpointId: string, seenOpenUntil: Date, leaseUntil: Date): Promise<boolean> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({ circuit_open_until: leaseUntil })
    .where('id', '=', endpointId)
    .where('circuit_open_until', '=', seenOpenUntil)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export function circuitOfRow(row: { consecutive_failures: number; circuit_open_until: Date | null; circuit_open_ms: number | null }): EndpointCircuit {
  return { consecutiveFailures: row.consecutive_failures, openUntil: row.circuit_open_until, openMs: row.circuit_open_ms };
}

/**
 * Disables an enabled endpoint, once: the returned row tells the caller it made the change (and so
 * owes the owner an event). With `failingFor`, only if its failing streak is at least that long.
 */
export async function disableEndpoint(db: Executor, endpointId: string, reason: string, failingFor?: { milliseconds: number }) {
  let query = db
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason })
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled');
  if (failingFor) {
    query = query.where('failing_since', '<=', sql<Date>`now() - make_interval(secs => ${failingFor.milliseconds / 1000})`);
  }
  return query.returningAll().executeTakeFirst();
}

// Dispatch -----------------------------------------------------------------------------------------

/**
 * The oldest undispatched events, locked for this transaction; SKIP LOCKED lets a second
 * dispatcher take the next batch instead of waiting for (and then repeating) this one.
 */
export async function lockUndispatchedEvents(db: Executor, limit: number) {
  return db
    .selectFrom('events')
    .select(['id'])
    .where('dispatched_at', 'is', null)
    .orderBy('sequence')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/**
 * One delivery per (event, enabled endpoint of the event's own biller whose filter takes the type);
 * an empty filter takes every type. The unique (event, endpoint) pair makes a repeat a no-op.
 */
export async function insertDeliveriesForEvents(db: Executor, eventIds: readonly string[]): Promise<number> {
  if (eventIds.length === 0) return 0;
  const result = await db
    .insertInto('webhook_deliveries')
    .columns(['event_id', 'endpoint_id'])
    .expression(
      db
        .selectFrom('events as e')
        .innerJoin('webhook_endpoints as w', 'w.biller_client_id', 'e.biller_client_id')
        .select(['e.id as event_id', 'w.id as endpoint_id'])
        .where('e.id', 'in', eventIds)
        .where('w.status', '=', 'enabled')
        .where('w.deleted_at', 'is', null)
        .where(sql<boolean>`(cardinality(w.event_types) = 0 or e.type = any(w.event_types))`),
    )
    .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}

export async function listPendingDeliveryIds(db: Executor, eventIds: readonly string[]): Promise<string[]> {
  if (eventIds.length === 0) return [];
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select('d.id')
    .where('d.event_id', 'in', eventIds)
    .where('d.status', '=', 'pending')
    .orderBy('e.sequence')
    .orderBy('d.id')
    .execute();
  return rows.map((row) => row.id);
}

export async function markEventsDispatched(db: Executor, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db.updateTable('events').set({ dispatched_at: sql<Date>`now()` }).where('id', 'in', eventIds).where('dispatched_at', 'is', null).execute();
}

// Delivery -----------------------------------------------------------------------------------------

/** Everything one attempt needs: the stored payload and the endpoint's address and secrets. */
export async function findDeliveryContext(db: Executor, deliveryId: string) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .select([
      'd.id as delivery_id',
      'd.status as delivery_status',
      'e.id as event_id',
      'e.type as event_type',
      eventPayloadSql('e').as('payload'),
      'w.id as endpoint_id',
      'w.biller_client_id',
      'w.url',
      'w.secret',
      'w.previous_secret',
      'w.previous_secret_expires_at',
      'w.status as endpoint_status',
      'w.deleted_at as endpoint_deleted_at',
      'w.consecutive_failures',
      'w.circuit_open_until',
      'w.circuit_open_ms',
    ])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

export interface AttemptRecord {
  deliveryId: string;
  statusCode: number | null;
  latencyMs: number;
  responseSnippet: string | null;
  error: string | null;
  /** The delivery's status after this attempt. */
  deliveryStatus: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
}

/** Counts the attempt on the delivery and stores it; returns its number (1 for the first). */
export async function recordAttempt(db: Executor, attempt: AttemptRecord): Promise<number> {
  const delivery = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      status: attempt.deliveryStatus,
      last_status_code: attempt.statusCode,
      next_attempt_at: attempt.nextAttemptAt,
      ...(attempt.deliveryStatus === 'succeeded' ? { succeeded_at: sql<Date>`now()` } : {}),
    }))
    .where('id', '=', attempt.deliveryId)
    .returning('attempts')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('webhook_delivery_attempts')
    .values({
      delivery_id: attempt.deliveryId,
      attempt_number: delivery.attempts,
      status_code: attempt.statusCode,
      latency_ms: attempt.latencyMs,
      response_snippet: attempt.responseSnippet,
      error: attempt.error,
    })
    .execute();
  return delivery.attempts;
}

export async function markDeliveryAbandoned(db: Executor, deliveryId: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'abandoned', next_attempt_at: null })
    .where('id', '=', deliveryId)
    .where('status', '=', 'pending')
    .execute();
}

// Redelivery ---------------------------------------------------------------------------------------

export async function findEventById(db: Executor, eventId: string) {
  return db.selectFrom('events').select(['id', 'type', 'biller_client_id']).where('id', '=', eventId).executeTakeFirst();
}

/** The enabled endpoints of the event's biller that take its type (what the dispatcher would pick now). */
export async function listEndpointsForEvent(db: Executor, billerClientId: string, eventType: EventType) {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('biller_client_id', '=', billerClientId)
    .where('status', '=', 'enabled')
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`(cardinality(event_types) = 0 or ${eventType} = any(event_types))`)
    .orderBy('created_at')
    .execute();
}

/** The delivery of this event to this endpoint, created or put back to pending for a fresh attempt. */
export async function reopenDelivery(db: Executor, eventId: string, endpointId: string): Promise<string> {
  const row = await db
    .insertInto('webhook_deliveries')
    .values({ event_id: eventId, endpoint_id: endpointId, last_status_code: null, next_attempt_at: null, succeeded_at: null })
    .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).doUpdateSet({ status: 'pending', next_attempt_at: null }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

// Operations ---------------------------------------------------------------------------------------

/** Endpoints an operator should look at: disabled, or failing right now; worst first. */
export async function listTroubledEndpoints(db: Executor, limit: number) {
  return db
    .selectFrom('webhook_endpoints as w')
    .innerJoin('clients as c', 'c.id', 'w.biller_client_id')
    .select([
      'w.id',
      'w.url',
      'w.status',
      'w.disabled_reason',
      'w.failing_since',
      'c.name as biller_name',
      (eb) =>
        eb
          .selectFrom('webhook_deliveries as d')
          .select((inner) => inner.fn.countAll<number>().as('count'))
          .whereRef('d.endpoint_id', '=', 'w.id')
          .where('d.status', '=', 'pending')
          .as('pending_deliveries'),
    ])
    .where('w.deleted_at', 'is', null)
    .where((eb) => eb.or([eb('w.status', '=', 'disabled'), eb('w.failing_since', 'is not', null)]))
    .orderBy(sql`w.status = 'disabled'`, 'desc')
    .orderBy('w.failing_since')
    .limit(limit)
    .execute();
}

/** The outbox backlog: events not yet turned into deliveries, and deliveries not yet settled. */
export async function outboxBacklog(db: Executor) {
  const [events, deliveries] = await Promise.all([
    db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('count')).where('dispatched_at', 'is', null).executeTakeFirstOrThrow(),
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow(),
  ]);
  return { undispatchedEvents: Number(events.count), pendingDeliveries: Number(deliveries.count) };
}

// Recovery -----------------------------------------------------------------------------------------

/** When the oldest event still waiting for the dispatcher was written (null: the outbox is empty). */
export async function oldestUndispatchedEventAt(db: Executor): Promise<Date | null> {
  const row = await db
    .selectFrom('events')
    .select('created_at')
    .where('dispatched_at', 'is', null)
    .orderBy('sequence')
    .limit(1)
    .executeTakeFirst();
  return row?.created_at ?? null;
}

/** Pending deliveries in id order, a page at a time: what Redis should hold a job for. */
export async function listPendingDeliveriesAfter(db: Executor, afterId: string | null, limit: number): Promise<string[]> {
  let query = db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending');
  if (afterId !== null) query = query.where('id', '>', afterId);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map((row) => row.id);
}
