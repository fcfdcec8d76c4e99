import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

function attemptsQuery(db: Executor) {
  return db
    .selectFrom('webhook_delivery_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([
      'a.id',
      'a.attempt_number',
      'a.attempted_at',
      'a.status_code',
      'a.error',
      'a.latency_ms',
      'd.id as delivery_id',
      'd.endpoint_id',
      'd.status as delivery_status',
      'e.id as event_id',
      'e.type as event_type',
    ]);
}

export type DeliveryAttemptRow = Awaited<ReturnType<ReturnType<typeof attemptsQuery>['execute']>>[number];

/** The latest `perEndpoint` delivery attempts of each endpoint, newest first (one query for a page of endpoints). */
export async function listRecentAttemptsOfEndpoints(db: Executor, endpointIds: readonly string[], perEndpoint: number): Promise<DeliveryAttemptRow[]> {
  if (endpointIds.length === 0) return [];
  return db
    .selectFrom(
      attemptsQuery(db)
        .select(sql<number>`row_number() over (partition by d.endpoint_id order by a.attempted_at desc, a.id desc)`.as('recency'))
        .where('d.endpoint_id', 'in', endpointIds)
        .as('ranked'),
    )
    .selectAll()
    .where('recency', '<=', perEndpoint)
    .orderBy('endpoint_id')
    .orderBy('recency')
    .execute();
}

/** One endpoint's latest delivery attempts, newest first. */
export async function listEndpointAttempts(db: Executor, endpointId: string, limit: number): Promise<DeliveryAttemptRow[]> {
  return attemptsQuery(db).where('d.endpoint_id', '=', endpointId).orderBy('a.attempted_at', 'desc').orderBy('a.id', 'desc').limit(limit).execute();
}

/** An endpoint as the console shows it, with its biller's name; deleted endpoints included (their history stays). */
export async function findEndpointWithBiller(db: Executor, endpointId: string) {
  return db
    .selectFrom('webhook_endpoints as w')
    .innerJoin('clients as c', 'c.id', 'w.biller_client_id')
    .select(['w.id', 'w.url', 'w.status', 'w.disabled_reason', 'w.failing_since', 'w.deleted_at', 'w.event_types', 'w.created_at', 'c.name as biller_name'])
    .where('w.id', '=', endpointId)
    .executeTakeFirst();
}
