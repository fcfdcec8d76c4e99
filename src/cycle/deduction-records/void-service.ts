import { z } from 'zod';
import { recordAction, describeActor, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { formatMinorUnits } from '../../platform/money/major-units.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import { findPayDateWithCurrency, listVoids, voidReportedRecords } from './reported-records-repository.ts';

// An operator's way out when what a payroll reported cannot stand (amounts no payroll deducted, a
// report against the wrong pay date) and the provider cannot or will not correct it: every record of
// the payroll pay date stops counting, kept as it was with the void that set it aside. The pay date
// is then as if payroll had reported nothing; reconciliation runs again, and the provider may report
// again (with versions above the voided ones).

export const MAX_VOID_REASON_LENGTH = 500;

export const recordVoidSchema = z
  .object({
    id: z.uuid(),
    payroll_id: z.uuid(),
    pay_date: z.iso.date(),
    reason: z.string(),
    voided_by: z.string(),
    voided_at: z.iso.datetime(),
    records: z.number().int().meta({ description: 'How many records stopped counting.' }),
    total_amount: z.string().meta({ description: 'What they added up to, as an exact decimal in the payroll currency (it may be past what a JSON number carries).' }),
    currency: z.string(),
  })
  .meta({
    id: 'DeductionRecordVoid',
    description: "An operator's void of a payroll pay date's reported records: who, when, why, and what stopped counting.",
    example: {
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8b',
      payroll_id: '019a7b2c-0000-7000-8000-000000000001',
      pay_date: '2026-11-27',
      reason: 'provider pushed test amounts to the live payroll; ticket 4411',
      voided_by: 'client 019a7b2c-0000-7000-8000-00000000000a',
      voided_at: '2026-11-28T09:12:00.000Z',
      records: 10,
      total_amount: '99999999999999.90',
      currency: 'GBP',
    },
  });
export type RecordVoidResource = z.infer<typeof recordVoidSchema>;

type VoidRow = { id: string; payroll_id: string; pay_date: string; reason: string; voided_by: string; voided_at: Date; records: number; total_amount: bigint };

function toRecordVoidResource(row: VoidRow, currency: string): RecordVoidResource {
  return {
    id: row.id,
    payroll_id: row.payroll_id,
    pay_date: row.pay_date,
    reason: row.reason,
    voided_by: row.voided_by,
    voided_at: new Date(row.voided_at).toISOString(),
    records: row.records,
    total_amount: formatMinorUnits(row.total_amount, currency),
    currency,
  };
}

/** Voids the payroll pay date's counting records, audited with the reason; 409 when none counts. */
export async function voidPayDateRecords(trx: Executor, actor: Actor, request: { payrollId: string; payDate: string; reason: string }): Promise<RecordVoidResource> {
  const reason = request.reason.trim();
  if (reason.length === 0 || reason.length > MAX_VOID_REASON_LENGTH) {
    throw new InvalidError('void-invalid', `a void needs a reason of 1 to ${MAX_VOID_REASON_LENGTH} characters`, {
      errors: [{ pointer: '/reason', detail: `must be 1 to ${MAX_VOID_REASON_LENGTH} characters` }],
    });
  }
  if (!isUuid(request.payrollId)) throw new NotFoundError(`Payroll ${request.payrollId}`);
  // Exclusive on the pay date, as a confirmation takes it: no push or confirmation lands half-voided.
  const payDate = await findPayDateWithCurrency(trx, request.payrollId, request.payDate, { forVoid: true });
  if (!payDate) throw new NotFoundError(`Pay date ${request.payDate} of payroll ${request.payrollId}`);
  const voided = await voidReportedRecords(trx, { id: timeOrderedUuid(), payrollId: request.payrollId, payDate: request.payDate, reason, voidedBy: describeActor(actor) });
  if (!voided) {
    throw new ConflictError('nothing-to-void', `Payroll ${request.payrollId} has no counting records for pay date ${request.payDate}`);
  }
  const resource = toRecordVoidResource({ ...voided, payroll_id: request.payrollId, pay_date: request.payDate, reason, voided_by: describeActor(actor) }, payDate.currency);
  await recordAction(trx, {
    actor,
    action: 'deduction_records.voided',
    resourceType: 'pay_date',
    resourceId: `${request.payrollId}/${request.payDate}`,
    reason,
    after: { void_id: voided.id, records: voided.records, total_amount: resource.total_amount, currency: payDate.currency },
  });
  return resource;
}

/** A payroll pay date's voids, newest first; 404 for an unknown pay date. */
export async function showPayDateVoids(db: Executor, payrollId: string, payDate: string): Promise<RecordVoidResource[]> {
  if (!isUuid(payrollId)) throw new NotFoundError(`Payroll ${payrollId}`);
  const found = await findPayDateWithCurrency(db, payrollId, payDate, { forVoid: false });
  if (!found) throw new NotFoundError(`Pay date ${payDate} of payroll ${payrollId}`);
  return (await listVoids(db, payrollId, payDate)).map((row) => toRecordVoidResource(row, found.currency));
}
