import type { Executor } from '../db/connection.ts';
import type { AuditActorKind } from '../db/tables.ts';

export interface NewAuditEntry {
  actorKind: AuditActorKind;
  actor: string;
  action: string;
  resourceType: string;
  resourceId: string;
  reason: string | null;
  before: unknown;
  after: unknown;
}

export async function insertAuditEntry(db: Executor, entry: NewAuditEntry) {
  return db
    .insertInto('audit_log')
    .values({
      actor_kind: entry.actorKind,
      actor: entry.actor,
      action: entry.action,
      resource_type: entry.resourceType,
      resource_id: entry.resourceId,
      reason: entry.reason,
      before: entry.before === undefined || entry.before === null ? null : JSON.stringify(entry.before),
      after: entry.after === undefined || entry.after === null ? null : JSON.stringify(entry.after),
    })
    .returning(['id', 'at'])
    .executeTakeFirstOrThrow();
}

export interface AuditFilters {
  resourceId?: string | undefined;
  action?: string | undefined;
  limit: number;
}

/** Newest first. */
export async function listAuditEntries(db: Executor, filters: AuditFilters) {
  let query = db.selectFrom('audit_log').selectAll();
  if (filters.resourceId) query = query.where('resource_id', '=', filters.resourceId);
  if (filters.action) query = query.where('action', '=', filters.action);
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(filters.limit).execute();
}
