import type { Executor } from '../../platform/db/connection.ts';
import { requireProvidersPayroll } from '../deduction-data/deduction-data-service.ts';
import type { EmployeePushRecord, EmployeePushResponse } from '../../directory/payroll-providers/reference-schemas.ts';
import { rowLockPayDateForPush } from '../snapshots/snapshot-repository.ts';
import { deductionContentHash, type StoredRequestedPayment } from './deduction-content.ts';
import { minorUnitsOrError } from './major-amount.ts';
import { findLatestRecord, insertPushRecord, isEmployeeOnPayroll } from './push-repository.ts';
import { toPushResponse } from './push-resource.ts';
import { pushVersionDecision, type PushVersionDecision } from './push-version-decision.ts';
import { reportedTotalOfOthers } from './reported-records-repository.ts';
import { payDateReportedOverLimitError, payDateWithinReportedLimit, reportedAmountOverLimit, reportedAmountsOverLimitError, type ReportedLimits } from './reported-limits.ts';
import type { Caller } from '../../platform/shared/caller.ts';
import { ConflictError, InvalidError, type FieldError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';

export interface EmployeePushOutcome {
  response: EmployeePushResponse;
  /** The pay date to reconcile when a new version was stored; null for an idempotent re-send. */
  storedForPayDate: string | null;
}

interface ValidatedPush {
  payDate: string;
  employeeId: string;
  deductionAmount: number;
  requestedPayments: StoredRequestedPayment[];
}

async function validatePush(trx: Executor, payroll: { id: string; currency: string }, record: EmployeePushRecord, limits: ReportedLimits): Promise<ValidatedPush> {
  const errors: FieldError[] = [];
  const calendarEntry = await rowLockPayDateForPush(trx, payroll.id, record.pay_period);
  if (!calendarEntry) {
    errors.push({ pointer: '/pay_period', detail: `${record.pay_period} is not a pay period in the calendar of payroll ${payroll.id}` });
  }
  const { employee_id: employeeId, currency } = record.salary_deduction;
  if (!isUuid(employeeId) || !(await isEmployeeOnPayroll(trx, payroll.id, employeeId))) {
    errors.push({ pointer: '/salary_deduction/employee_id', detail: `employee ${employeeId} is not on payroll ${payroll.id}` });
  }
  let deductionAmount = 0;
  const requestedPayments: StoredRequestedPayment[] = [];
  if (currency !== payroll.currency) {
    errors.push({ pointer: '/salary_deduction/currency', detail: `must be ${payroll.currency}, the currency of payroll ${payroll.id}` });
  } else {
    const amount = minorUnitsOrError(record.salary_deduction.deduction_amount, currency, '/salary_deduction/deduction_amount');
    if (amount.error) errors.push(amount.error);
    else deductionAmount = amount.minor;
    record.requested_payments.forEach(({ payment_information: information }, index) => {
      const paymentAmount = minorUnitsOrError(information.payment_amount, currency, `/requested_payments/${index}/payment_information/payment_amount`);
      if (paymentAmount.error) return void errors.push(paymentAmount.error);
      requestedPayments.push({
        payment_information: {
          payment_reference: information.payment_reference,
          payment_amount: paymentAmount.minor,
          payment_account: {
            account_number: information.payment_account.account_number,
            sort_code: information.payment_account.sort_code,
            account_holder_name: information.payment_account.account_holder_name,
          },
        },
      });
    });
  }
  if (errors.length > 0) {
    throw new InvalidError('deduction-record-rejected', errors.map((error) => error.detail).join('; '), { errors });
  }
  const overLimit = [
    reportedAmountOverLimit(deductionAmount, '/salary_deduction/deduction_amount', limits, currency),
    ...requestedPayments.map((payment, index) =>
      reportedAmountOverLimit(payment.payment_information.payment_amount, `/requested_payments/${index}/payment_information/payment_amount`, limits, currency),
    ),
  ].filter((error) => error !== null);
  if (overLimit.length > 0) throw reportedAmountsOverLimitError(overLimit, limits, currency);
  return { payDate: calendarEntry!.pay_date, employeeId: employeeId.toLowerCase(), deductionAmount, requestedPayments };
}

function versionConflict(decision: Extract<PushVersionDecision, { kind: 'conflict' }>, record: EmployeePushRecord): ConflictError {
  const about = `employee ${record.salary_deduction.employee_id} in pay period ${record.pay_period}`;
  const detail =
    decision.reason === 'lower-version'
      ? `Version ${record.version} is lower than the current version ${decision.currentVersion} for ${about}; push a version above ${decision.currentVersion}`
      : `Version ${record.version} was already accepted with different content for ${about}; the current version is ${decision.currentVersion}, push a version above it to replace it`;
  return new ConflictError('deduction-version-conflict', detail, { members: { current_version: decision.currentVersion } });
}

/**
 * Employee push: stores the record as a new version per (payroll, pay period, employee) when it is
 * higher than the current one. Correct under concurrency without row locks on the records: the unique
 * version key decides between two pushes of one version, and "current" is always the highest.
 */
export async function acceptEmployeePush(trx: Executor, caller: Caller, payrollId: string, record: EmployeePushRecord, limits: ReportedLimits): Promise<EmployeePushOutcome> {
  const payroll = await requireProvidersPayroll(trx, caller, payrollId);
  const push = await validatePush(trx, payroll, record, limits);
  const incoming = {
    version: record.version,
    contentHash: deductionContentHash({
      employeeId: push.employeeId,
      deductionAmount: push.deductionAmount,
      currency: record.salary_deduction.currency,
      leaver: false,
      requestedPayments: push.requestedPayments,
    }),
  };
  const response = toPushResponse(payroll.id, record);

  // The record the decision was made against: an unchanged re-send of it is refused below when voided.
  let current: Awaited<ReturnType<typeof findLatestRecord>>;
  const decide = async () => {
    current = await findLatestRecord(trx, payroll.id, record.pay_period, push.employeeId);
    return pushVersionDecision(current ? { version: current.version, contentHash: current.content_hash } : null, incoming);
  };
  let decision = await decide();
  if (decision.kind === 'insert') {
    const othersTotal = await reportedTotalOfOthers(trx, payroll.id, push.payDate, [push.employeeId]);
    if (!payDateWithinReportedLimit(othersTotal, BigInt(push.deductionAmount), limits)) {
      throw payDateReportedOverLimitError(push.payDate, othersTotal, BigInt(push.deductionAmount), limits, payroll.currency, '/salary_deduction/deduction_amount');
    }
    const inserted = await insertPushRecord(trx, {
      payrollId: payroll.id,
      payPeriod: record.pay_period,
      payDate: push.payDate,
      employeeId: push.employeeId,
      recordId: record.id,
      version: record.version,
      deductionAmount: push.deductionAmount,
      currency: record.salary_deduction.currency,
      requestedPayments: push.requestedPayments,
      contentHash: incoming.contentHash,
      receivedByClientId: caller.clientId,
    });
    if (inserted) return { response, storedForPayDate: push.payDate };
    // Another request stored this very version between our read and our insert: judge against it.
    decision = await decide();
    if (decision.kind === 'insert') throw new Error(`version ${record.version} exists yet is not current; refusing to guess`);
  }
  if (decision.kind === 'conflict') throw versionConflict(decision, record);
  // A re-send of a record an operator voided would be answered as stored while it counts for nothing.
  if (current?.void_id) {
    throw new ConflictError(
      'deduction-record-voided',
      `Version ${record.version} for employee ${record.salary_deduction.employee_id} in pay period ${record.pay_period} was voided by an operator; push a version above ${current.version} to report again`,
      { members: { current_version: current.version, void_id: current.void_id } },
    );
  }
  return { response, storedForPayDate: null };
}
