import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { performRerun } from '../src/deductions/rerun-service.ts';
import { pushInstructionsToProvider } from '../src/deductions/provider-push-service.ts';
import type { AdapterFactory } from '../src/payroll-providers/adapter.ts';
import { uuidSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ rerunId: uuidSchema });

/** Re-runs one payroll pay date; the re-run row makes a second delivery a no-op. */
export function rerunPayDateProcessor(db: Database, adapterFor: AdapterFactory) {
  return async (job: Job) => {
    const outcome = await performRerun(db, payloadSchema.parse(job.data).rerunId);
    const snapshot = await db.selectFrom('deduction_snapshots').select(['payroll_id', 'pay_date']).where('id', '=', outcome.snapshotId).executeTakeFirstOrThrow();
    const pushes = await pushInstructionsToProvider(db, adapterFor, snapshot.payroll_id, snapshot.pay_date);
    return { ...outcome, providerPushes: pushes.sent };
  };
}
