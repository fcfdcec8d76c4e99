import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { findPayrollProvider } from '../payroll-providers/provider-repository.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { invalidInput } from '../../platform/shared/invalid-input.ts';
import { pageOf, type PagingQuery } from '../../platform/shared/paging.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { findEmployer } from './employer-repository.ts';
import { findPayroll, findPayrollByExternalId, insertPayroll, listPayrolls, updatePayroll } from './payroll-setup-repository.ts';
import { newPayrollSchema, payrollChangeSchema, toPayrollRecord, type PayrollRecord } from './payroll-setup-resource.ts';

/**
 * A payroll of an employer, run by the employer's payroll provider. Its calendar follows the
 * bank holidays of the region given, else its provider's. An external id that is a UUID is also the
 * payroll's id: the reference interface names payrolls by the provider's UUID, which we keep as ours.
 */
export async function setUpPayroll(trx: Executor, input: unknown, action: { actor: Actor }): Promise<PayrollRecord> {
  const parsed = newPayrollSchema.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error);
  const payroll = parsed.data;
  const employer = isUuid(payroll.employer_id) ? await findEmployer(trx, payroll.employer_id) : undefined;
  if (!employer) {
    throw new InvalidError('unknown-employer', `Employer ${payroll.employer_id} does not exist`, {
      errors: [{ pointer: '/employer_id', detail: 'is not a known employer' }],
    });
  }
  const provider = (await findPayrollProvider(trx, employer.payroll_provider_id))!;
  const taken = () =>
    new ConflictError('payroll-exists', `Payroll provider ${provider.id} already has a payroll with external id ${payroll.external_id}`, {
      errors: [{ pointer: '/external_id', detail: 'is taken by another payroll of this provider' }],
    });
  if (await findPayrollByExternalId(trx, provider.id, payroll.external_id)) throw taken();

  const id = isUuid(payroll.external_id) ? payroll.external_id.toLowerCase() : crypto.randomUUID();
  const row = await insertPayroll(trx, {
    id,
    employer_id: employer.id,
    payroll_provider_id: provider.id,
    external_id: payroll.external_id,
    name: payroll.name,
    payment_run_frequency: payroll.payment_run_frequency,
    currency: payroll.currency,
    bank_holiday_region: payroll.bank_holiday_region ?? provider.region,
  });
  if (!row) {
    if (await findPayrollByExternalId(trx, provider.id, payroll.external_id)) throw taken();
    throw new ConflictError('payroll-id-taken', `Payroll ${id} already exists under another payroll provider`, {
      errors: [{ pointer: '/external_id', detail: "is already another provider's payroll id" }],
    });
  }
  const record = toPayrollRecord(row);
  await recordAction(trx, { actor: action.actor, action: 'payroll.created', resourceType: 'payroll', resourceId: row.id, reason: null, after: record });
  return record;
}

/**
 * Changes a payroll's name, frequency or bank-holiday region. A new region changes which days are
 * working days for its calendar, so the lock dates of its unlocked pay dates move with it, in the
 * same transaction (locked ones were locked on the day they locked). The lock-date rule lives with
 * the calendars, which know payrolls, hence passed in.
 */
export async function changePayroll(
  trx: Executor,
  payrollId: string,
  input: unknown,
  action: { actor: Actor },
  calendars: { recomputeLockDates: (trx: Executor, scope: { payrollId: string }) => Promise<number> },
): Promise<{ payroll: PayrollRecord; lock_dates_changed: number }> {
  const before = isUuid(payrollId) ? await findPayroll(trx, payrollId, { rowLock: true }) : undefined;
  if (!before) throw new NotFoundError(`Payroll ${payrollId}`);
  const parsed = payrollChangeSchema.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error);
  const { reason, ...fields } = parsed.data;
  if (Object.values(fields).every((value) => value === undefined)) {
    throw new InvalidError('nothing-to-change', 'Name at least one of name, payment_run_frequency or bank_holiday_region to change');
  }
  const row = await updatePayroll(trx, before.id, fields);
  const lockDatesChanged = row.bank_holiday_region === before.bank_holiday_region ? 0 : await calendars.recomputeLockDates(trx, { payrollId: row.id });
  const payroll = toPayrollRecord(row);
  await recordAction(trx, {
    actor: action.actor,
    action: 'payroll.updated',
    resourceType: 'payroll',
    resourceId: row.id,
    reason: reason ?? null,
    before: toPayrollRecord(before),
    after: { ...payroll, lock_dates_changed: lockDatesChanged },
  });
  return { payroll, lock_dates_changed: lockDatesChanged };
}

export async function getPayrollRecord(db: Executor, payrollId: string): Promise<PayrollRecord> {
  const row = isUuid(payrollId) ? await findPayroll(db, payrollId) : undefined;
  if (!row) throw new NotFoundError(`Payroll ${payrollId}`);
  return toPayrollRecord(row);
}

export async function listPayrollRecords(db: Executor, filters: { employerId?: string | undefined; payrollProviderId?: string | undefined }, paging: PagingQuery) {
  const { items, paging: page } = pageOf(await listPayrolls(db, filters, paging), paging);
  return { payrolls: items.map(toPayrollRecord), paging: page };
}
