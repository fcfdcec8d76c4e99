import type { Executor } from '../db/connection.ts';

export async function insertRerun(db: Executor, rerun: { payroll_id: string; pay_date: string; reason: string; requested_by: string; previous_snapshot_id: string }) {
  return db.insertInto('reruns').values(rerun).returningAll().executeTakeFirstOrThrow();
}

/** Row-locks the re-run so two deliveries of its job cannot both supersede the snapshot. */
export async function lockRerun(db: Executor, rerunId: string) {
  return db.selectFrom('reruns').selectAll().where('id', '=', rerunId).forUpdate().executeTakeFirst();
}

export async function completeRerun(db: Executor, rerunId: string, newSnapshotId: string): Promise<void> {
  await db.updateTable('reruns').set({ new_snapshot_id: newSnapshotId, completed_at: new Date() }).where('id', '=', rerunId).execute();
}
