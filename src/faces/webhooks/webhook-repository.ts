import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { EventType } from '../../platform/db/tables.ts';
import { type PagingQuery } from '../../platform/shared/paging.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import { eventPayloadSql } from '../../collections/payments/payment-event-repository.ts';
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
export async function advisoryLockBillerEndpoints(db: Executor, billerClientId: string): Promise<void> {
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
  const query = db.selectFrom('webhook_endpoints').selectAll().where('biller_client_id', '=', billerClientId).where('deleted_at', 'is', null);
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
export async function replaceEndpointSecret(db: Executor, billerClientId: string, endpointId: string, newSecret: string, graceUntil: Date) {
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
export async function rowLockAllEndpointSecrets(db: Executor) {
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
export async function rowLockEndpointCircuit(db: Executor, endpointId: string): Promise<EndpointCircuit> {
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
  let query = db.updateTable('webhook_endpoints').set({ status: 'disabled', disabled_reason: reason }).where('id', '=', endpointId).where('status', '=', 'enabled');
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
export async function rowLockUndispatchedEvents(db: Executor, limit: number) {
  return db.selectFrom('events').select(['id']).where('dispatched_at', 'is', null).orderBy('sequence').limit(limit).forUpdate().skipLocked().execute();
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
        .where(sql<boolean>`(cardinality(w.event_types) = 0 or e.type = any(w.event_types))`)
        // The deliveries' sequence numbers follow the events' order: the order a biller's backlog goes out in.
        .orderBy('e.sequence')
        .orderBy('w.created_at'),
    )
    .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}

export async function markEventsDispatched(db: Executor, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db
    .updateTable('events')
    .set({ dispatched_at: sql<Date>`now()` })
    .where('id', 'in', eventIds)
    .where('dispatched_at', 'is', null)
    .execute();
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
      'd.job_id',
      'd.attempts',
      'd.attempts_before_run',
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
  /** The job that made the attempt gives the delivery back (if it still holds it): settled, or to the backlog until its retry. */
  releasedBy?: string | undefined;
}

/** Counts the attempt on the delivery and stores it, in one statement; returns its number (1 for the first). */
export async function recordAttempt(db: Executor, attempt: AttemptRecord): Promise<number> {
  const release =
    attempt.releasedBy === undefined
      ? sql``
      : sql`, job_id = case when job_id = ${attempt.releasedBy} then null else job_id end,
            admitted_at = case when job_id = ${attempt.releasedBy} then null else admitted_at end`;
  const { rows } = await sql<{ attempt_number: number }>`
    with counted as (
      update webhook_deliveries
      set attempts = attempts + 1,
          status = ${attempt.deliveryStatus},
          last_status_code = ${attempt.statusCode},
          next_attempt_at = ${attempt.nextAttemptAt},
          succeeded_at = case when ${attempt.deliveryStatus} = 'succeeded' then now() else succeeded_at end
          ${release}
      where id = ${attempt.deliveryId}
      returning id, attempts
    )
    insert into webhook_delivery_attempts (delivery_id, attempt_number, status_code, latency_ms, response_snippet, error)
    select id, attempts, ${attempt.statusCode}::integer, ${attempt.latencyMs}::integer, ${attempt.responseSnippet}::text, ${attempt.error}::text from counted
    returning attempt_number
  `.execute(db);
  if (rows.length === 0) throw new Error(`no webhook delivery ${attempt.deliveryId}`);
  return rows[0]!.attempt_number;
}

export async function markDeliveryAbandoned(db: Executor, deliveryId: string): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ status: 'abandoned', next_attempt_at: null }).where('id', '=', deliveryId).where('status', '=', 'pending').execute();
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

/**
 * The delivery of this event to this endpoint, created or put back to pending for a fresh attempt: a new
 * run of the retry schedule, due at once (first in its biller's backlog, as it is older than what came
 * after it). A job that holds it still does; otherwise it waits in the backlog to be admitted.
 */
export async function reopenDelivery(db: Executor, eventId: string, endpointId: string): Promise<string> {
  const row = await db
    .insertInto('webhook_deliveries')
    .values({ event_id: eventId, endpoint_id: endpointId, last_status_code: null, next_attempt_at: null, succeeded_at: null })
    .onConflict((oc) =>
      oc.columns(['event_id', 'endpoint_id']).doUpdateSet((eb) => ({
        status: 'pending',
        next_attempt_at: null,
        attempts_before_run: eb.ref('webhook_deliveries.attempts'),
      })),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

// Operations ---------------------------------------------------------------------------------------

/**
 * Billers' endpoints (not deleted) with the biller's name, state and deliveries waiting, worst first:
 * disabled, then failing (the longest first), then delivering by biller. `troubledOnly`: only those an
 * operator should look at, disabled or failing right now.
 */
export async function listEndpointsWithState(db: Executor, options: { troubledOnly: boolean; limit: number }) {
  let query = db
    .selectFrom('webhook_endpoints as w')
    .innerJoin('clients as c', 'c.id', 'w.biller_client_id')
    .select([
      'w.id',
      'w.url',
      'w.status',
      'w.disabled_reason',
      'w.failing_since',
      'w.created_at',
      'w.biller_client_id',
      'c.name as biller_name',
      // How many there are in all, beyond the limit (the attention list counts them).
      sql<number>`(count(*) over ())::int`.as('total'),
      (eb) =>
        eb
          .selectFrom('webhook_deliveries as d')
          .select((inner) => inner.fn.countAll<number>().as('count'))
          .whereRef('d.endpoint_id', '=', 'w.id')
          .where('d.status', '=', 'pending')
          .as('pending_deliveries'),
    ])
    .where('w.deleted_at', 'is', null);
  if (options.troubledOnly) query = query.where((eb) => eb.or([eb('w.status', '=', 'disabled'), eb('w.failing_since', 'is not', null)]));
  return query
    .orderBy(sql`w.status = 'disabled'`, 'desc')
    .orderBy('w.failing_since')
    .orderBy('c.name')
    .orderBy('w.url')
    .orderBy('w.id')
    .limit(options.limit)
    .execute();
}

export type EndpointWithState = Awaited<ReturnType<typeof listEndpointsWithState>>[number];

/** Endpoints an operator should look at: disabled, or failing right now; worst first. */
export async function listTroubledEndpoints(db: Executor, limit: number) {
  return listEndpointsWithState(db, { troubledOnly: true, limit });
}

/** The outbox backlog: events not yet turned into deliveries, and deliveries not yet settled. */
export async function outboxBacklog(db: Executor) {
  const [events, deliveries] = await Promise.all([
    db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('dispatched_at', 'is', null)
      .executeTakeFirstOrThrow(),
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
  const row = await db.selectFrom('events').select('created_at').where('dispatched_at', 'is', null).orderBy('sequence').limit(1).executeTakeFirst();
  return row?.created_at ?? null;
}

/** Admitted deliveries in id order, a page at a time, with the job that holds each: what Redis should hold. */
export async function listAdmittedDeliveriesAfter(db: Executor, afterId: string | null, limit: number) {
  let query = db.selectFrom('webhook_deliveries').select(['id', 'job_id']).where('job_id', 'is not', null);
  if (afterId !== null) query = query.where('id', '>', afterId);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map((row) => ({ id: row.id, jobId: row.job_id! }));
}

/** Deliveries admitted before `before` and still held, oldest first: the ones whose job may have been lost. */
export async function listAdmittedBefore(db: Executor, before: Date, limit: number) {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'job_id'])
    .where('job_id', 'is not', null)
    .where('admitted_at', '<', before)
    .orderBy('admitted_at')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, jobId: row.job_id! }));
}

// Admission ----------------------------------------------------------------------------------------
//
// A pending delivery waits in its biller's backlog (job_id null) until it is admitted: handed to one
// queue job (job_id), which alone may attempt it and gives it back when its attempt is recorded or it
// must wait (webhook-admission.ts). A backlog row is due at coalesce(next_attempt_at, created_at).

const dueAt = sql<Date>`coalesce(d.next_attempt_at, d.created_at)`;
/**
 * Due by `now`: a retry's time is written from the application's clock, a new delivery's created_at
 * from the database's, so a database clock running ahead never holds new deliveries back.
 */
const dueBy = (now: Date) => sql<Date>`greatest(${now}::timestamptz, now())`;

/**
 * Holds the biller's admissions until the transaction ends: two dispatchers (or jobs) admitting for
 * one biller count one after the other, so together they never pass its share.
 */
export async function advisoryLockBillerAdmissions(db: Executor, billerClientId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-admissions:${billerClientId}`}, 0))`.execute(db);
}

/** The biller's deliveries held by a job now, queued or being sent. */
export async function countAdmitted(db: Executor, billerClientId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('w.biller_client_id', '=', billerClientId)
    .where('d.job_id', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The backlog of the biller's disabled or deleted endpoints is abandoned, as their jobs would have
 * found it (a delivery a job holds is abandoned by that job). Returns how many.
 */
export async function abandonBacklogOfRemovedEndpoints(db: Executor, billerClientId: string): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'abandoned', next_attempt_at: null })
    .where('status', '=', 'pending')
    .where('job_id', 'is', null)
    .where('endpoint_id', 'in', (eb) =>
      eb
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('biller_client_id', '=', billerClientId)
        .where((inner) => inner.or([inner('status', '<>', 'enabled'), inner('deleted_at', 'is not', null)])),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The room left in the biller's share (`perBiller` less what it has admitted now), and up to that
 * many of its backlog due by `now`, oldest due first (then in creation order), across its enabled
 * endpoints: every due delivery of an endpoint whose circuit is closed; of one whose circuit is
 * half-open (its opening over, no probe under way) one, to probe it, unless the endpoint already has
 * a delivery admitted (that one will); none of an endpoint whose circuit is open or being probed.
 * Read through the backlog index, a few rows per endpoint.
 */
export async function pickDueDeliveries(db: Executor, billerClientId: string, perBiller: number, now: Date) {
  const { rows } = await sql<{ room: number; id: string | null; admissions: number | null }>`
    with room as (
      select greatest(0, ${perBiller}::integer - count(*))::integer as n
      from webhook_deliveries d
      join webhook_endpoints w on w.id = d.endpoint_id
      where w.biller_client_id = ${billerClientId} and d.job_id is not null
    ),
    picked as (
      select x.id, x.admissions, x.due, x.sequence
      from webhook_endpoints w
      cross join lateral (
        select d.id, d.admissions, ${dueAt} as due, d.sequence
        from webhook_deliveries d
        where d.endpoint_id = w.id and d.status = 'pending' and d.job_id is null and ${dueAt} <= ${dueBy(now)}
        order by ${dueAt}, d.sequence
        limit case
          when w.circuit_open_until is null then (select n from room)
          when w.circuit_open_until <= ${now}
            and not exists (select 1 from webhook_deliveries a where a.endpoint_id = w.id and a.job_id is not null) then 1
          else 0
        end
      ) x
      where w.biller_client_id = ${billerClientId} and w.status = 'enabled' and w.deleted_at is null
      order by x.due, x.sequence
      limit (select n from room)
    )
    select room.n as room, picked.id, picked.admissions
    from room left join picked on true
    order by picked.due, picked.sequence
  `.execute(db);
  return {
    room: rows[0]?.room ?? 0,
    due: rows.filter((row) => row.id !== null).map((row) => ({ id: row.id!, admissions: row.admissions! })),
  };
}

/**
 * Hands each delivery to its job: compare-and-set on the backlog row as picked (still unheld, still
 * pending, admitted as often as seen), so a delivery is never handed to two jobs. Returns the ids handed.
 */
export async function markAdmitted(db: Executor, admissions: readonly { id: string; admission: number; jobId: string }[]): Promise<Set<string>> {
  if (admissions.length === 0) return new Set();
  const values = sql.join(admissions.map((a) => sql`(${a.id}::uuid, ${a.jobId}::text, ${a.admission}::integer)`));
  const { rows } = await sql<{ id: string }>`
    update webhook_deliveries d
    set job_id = v.job_id, admitted_at = now(), admissions = v.admission
    from (values ${values}) as v (id, job_id, admission)
    where d.id = v.id and d.job_id is null and d.status = 'pending' and d.admissions = v.admission - 1
    returning d.id
  `.execute(db);
  return new Set(rows.map((row) => row.id));
}

/**
 * One delivery handed to a job that asked for it (an operator's redelivery, a job queued before
 * admission), if no job holds it and it is due (a retry waits for its time however it is asked for).
 */
export async function claimDeliveryForJob(db: Executor, deliveryId: string, jobId: string, now: Date): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    update webhook_deliveries d
    set job_id = ${jobId}, admitted_at = now(), admissions = d.admissions + 1
    where d.id = ${deliveryId} and d.job_id is null and d.status = 'pending' and ${dueAt} <= ${dueBy(now)}
    returning d.id
  `.execute(db);
  return rows.length > 0;
}

/** The job gives its delivery back (settled, or to wait in the backlog); a job that no longer holds it changes nothing. */
export async function releaseDelivery(db: Executor, deliveryId: string, jobId: string): Promise<boolean> {
  const row = await db
    .updateTable('webhook_deliveries')
    .set({ job_id: null, admitted_at: null })
    .where('id', '=', deliveryId)
    .where('job_id', '=', jobId)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * When the biller's backlog next has something to admit after `now`: the earliest retry not yet due
 * on an endpoint whose circuit is closed, or the end of an open circuit's opening (or of a probe's
 * lease) on an endpoint with a backlog. Null when nothing is waiting for a time.
 */
export async function nextDueInBacklog(db: Executor, billerClientId: string, now: Date): Promise<Date | null> {
  const { rows } = await sql<{ next: Date | null }>`
    select min(due) as next from (
      select (
        select ${dueAt}
        from webhook_deliveries d
        where d.endpoint_id = w.id and d.status = 'pending' and d.job_id is null and ${dueAt} > ${dueBy(now)}
        order by ${dueAt}, d.sequence
        limit 1
      ) as due
      from webhook_endpoints w
      where w.biller_client_id = ${billerClientId} and w.status = 'enabled' and w.deleted_at is null and w.circuit_open_until is null
      union all
      select w.circuit_open_until
      from webhook_endpoints w
      where w.biller_client_id = ${billerClientId} and w.status = 'enabled' and w.deleted_at is null and w.circuit_open_until > ${now}
        and exists (select 1 from webhook_deliveries d where d.endpoint_id = w.id and d.status = 'pending' and d.job_id is null)
    ) next_due
  `.execute(db);
  return rows[0]?.next ?? null;
}

/** Billers with a backlog due by `now` (including that of removed endpoints, to abandon): whom the dispatcher admits for. */
export async function listBillersWithDueBacklog(db: Executor, now: Date): Promise<string[]> {
  const { rows } = await sql<{ biller_client_id: string }>`
    select distinct w.biller_client_id
    from webhook_endpoints w
    where exists (
      select 1 from webhook_deliveries d
      where d.endpoint_id = w.id and d.status = 'pending' and d.job_id is null and ${dueAt} <= ${dueBy(now)}
    )
  `.execute(db);
  return rows.map((row) => row.biller_client_id);
}
