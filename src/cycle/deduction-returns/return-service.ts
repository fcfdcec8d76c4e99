import { lineErrorAsFieldError } from '../../platform/shared/json-pointer.ts';
import type { ImportErrorSink } from '../../directory/payrolls/employee-import-error-file.ts';
import { clientActor, describeActor, recordAction } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { toMajorUnits } from '../../platform/money/major-units.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isoInstant, isUuid } from '../../platform/shared/schemas.ts';
import { providersPayroll } from '../deduction-data/deduction-data-service.ts';
import { confirmPayDate, type ConfirmationSubmitter } from '../deduction-records/confirmation-service.ts';
import type { ConfirmationSubmission } from '../deduction-records/confirmation-resource.ts';
import { deductionContentHash } from '../deduction-records/deduction-content.ts';
import type { ReportedLimits } from '../deduction-records/reported-limits.ts';
import { sha256Hex } from '../instructions/instruction-file.ts';
import { findInstructionFile } from '../instructions/instruction-repository.ts';
import { findPayDate } from '../snapshots/snapshot-repository.ts';
import { deductionReturnFileName, readReturnFileRecords, renderDeductionReturnFile } from './return-file.ts';
import { checkDeductionReturn, type ReturnFileCheck, type ReturnLine } from './return-file-rules.ts';
import {
  findCurrentInstructionFile,
  findLatestReturnImportOfFile,
  findPayrollOfReturn,
  insertReturnImport,
  listCurrentRecordHashes,
  listInstructionItemsOfFile,
} from './return-repository.ts';
import type { DeductionReturnReport } from './return-resource.ts';

/** Errors (and warnings) a report lists; the rest are counted, and all go to the request's errorSink, if any. */
export const RETURN_ERROR_LIMIT = 1_000;

/** A return file, as handed out: named after the instruction file it answers, with its digest. */
export interface DeductionReturnDownload {
  file_name: string;
  content: Buffer;
  sha256: string;
  file_version: number;
}

/**
 * The deduction return file of a payroll pay date's instruction file (the newest version unless
 * `version`), pre-filled with what it asks: the same bytes every time it is asked for.
 */
export async function deductionReturnFileOf(db: Executor, payrollId: string, payDate: string, version?: number): Promise<DeductionReturnDownload> {
  const file = isUuid(payrollId) ? await findInstructionFile(db, payrollId, payDate, version) : undefined;
  if (!file) throw new NotFoundError(`Instruction file${version === undefined ? '' : ` version ${version}`} of payroll ${payrollId} for ${payDate}`);
  const content = renderDeductionReturnFile(file.content);
  return { file_name: deductionReturnFileName(file.file_name), content, sha256: sha256Hex(content), file_version: file.file_version };
}

export interface DeductionReturnImportRequest {
  payrollId: string;
  payDate: string;
  /** The file as received. */
  content: Buffer;
  dryRun: boolean;
  /** Confirm the good items even when some are bad. */
  partial: boolean;
  /** The provider's client (the API), or the operator who imports the provider's file (CLI, console). */
  submitter: ConfirmationSubmitter;
  limits: ReportedLimits;
  reason?: string | null;
  /** Where its errors go as they are found: the CLI's --errors-out file. */
  errorSink?: ImportErrorSink;
}

/** A file the import refuses: nothing was confirmed, and the report says why. */
export class DeductionReturnRejected extends InvalidError {
  constructor(
    readonly report: DeductionReturnReport,
    detail: string,
  ) {
    super('deduction-return-rejected', detail, {
      errors: report.errors.map(lineErrorAsFieldError),
      members: { rows: report.rows, rejected: report.rejected, error_count: report.error_count, errors_truncated: report.errors_truncated, file_sha256: report.file_sha256 },
    });
  }
}

/** A stopped deduction with nothing deducted and nobody leaving says nothing: the deduction data has no line for it either. */
const reports = (line: ReturnLine) => !(line.action === 'stop' && line.deducted === 0 && !line.leaver);

function refusalDetail(check: ReturnFileCheck): string {
  if (check.fileErrors > 0) {
    return `The file is refused whole: ${check.fileErrors} error(s) in its columns, header, trailer or record order (${check.errors.length} in all); nothing was confirmed`;
  }
  return `${check.rejectedRows} of ${check.rows} items are bad (${check.errors.length} errors); nothing was confirmed. Fix them, or ask for partial application to confirm the good items`;
}

/**
 * Imports a payroll pay date's deduction return file, in the caller's transaction, as the pay date's
 * confirmation (return-file-rules.ts says what the file must be):
 * 1. the file is checked whole against the current instruction file of the pay date, every fault
 *    reported with its line and column;
 * 2. a file with faults is refused (DeductionReturnRejected) unless partial application was asked
 *    for, and a wrong column line, header or trailer refuses it even then;
 * 3. the good items become a confirmation submission, one line per employee (employee id from the
 *    instruction item, deducted amount in major units, leaver), which confirmPayDate stores exactly as
 *    it stores the provider's POST: the same checks, records, snapshot status and limits. A stopped
 *    deduction reporting nothing is left out, as the deduction data leaves it out;
 * 4. when the pay date's current records already say what the good items say, nothing is written:
 *    importing the same file again changes nothing.
 * A dry run does 1 to 4 and writes nothing. An applied import is recorded (file sha256, the
 * confirmation, who) and audited. The caller asks for reconciliation once the transaction commits.
 */
export async function importDeductionReturn(trx: Executor, request: DeductionReturnImportRequest): Promise<DeductionReturnReport> {
  const { payDate, submitter } = request;
  const found = isUuid(request.payrollId) ? await findPayrollOfReturn(trx, request.payrollId) : undefined;
  const payroll = submitter.kind === 'provider' ? providersPayroll(submitter.caller, request.payrollId, found) : found;
  if (!payroll) throw new NotFoundError(`Payroll ${request.payrollId}`);
  const calendarEntry = await findPayDate(trx, payroll.id, payDate);
  if (!calendarEntry) throw new NotFoundError(`Pay date ${payDate} on payroll ${payroll.id}`);
  const file = await findCurrentInstructionFile(trx, payroll.id, payDate);
  if (!file) {
    throw new ConflictError(
      'deduction-data-not-final',
      `Pay date ${payDate} has no instruction file to answer yet: it is locked on ${calendarEntry.lock_date}, ahead of the payroll cut-off on ${calendarEntry.payroll_cutoff_date}`,
      { members: { lock_date: calendarEntry.lock_date, payroll_cutoff_date: calendarEntry.payroll_cutoff_date } },
    );
  }
  const items = await listInstructionItemsOfFile(trx, file.id);
  const { currency } = payroll;
  const expectation = {
    payDate,
    payrollId: payroll.id,
    payrollExternalId: payroll.external_id,
    currency,
    fileVersion: file.file_version,
    items: items.map((item) => ({
      employeeId: item.employee_id,
      payrollReference: item.payroll_reference,
      paymentReference: item.payment_reference,
      amount: item.amount,
      action: item.action,
    })),
    limits: request.limits,
  };
  const read = readReturnFileRecords(request.content);
  const check: ReturnFileCheck =
    'error' in read ? { rows: 0, lines: [], rejectedRows: 0, fileErrors: 1, errors: [read.error], warnings: [] } : checkDeductionReturn(read.records, expectation);
  await request.errorSink?.write(check.errors);

  const lines = check.lines.filter(reports);
  const sha256 = sha256Hex(request.content);
  const previous = await findLatestReturnImportOfFile(trx, payroll.id, payDate, sha256);
  const refused = check.fileErrors > 0 || (check.errors.length > 0 && !request.partial);
  let outcome: DeductionReturnReport['outcome'];
  if (refused) outcome = 'refused';
  else if (lines.length === 0) outcome = 'nothing_to_confirm';
  else if (await alreadyReported(trx, payroll.id, payDate, currency, lines)) outcome = 'already_reported';
  else outcome = request.dryRun ? 'would_confirm' : 'confirmed';

  const sum = (pick: (line: ReturnLine) => number) => lines.reduce((total, line) => total + pick(line), 0);
  const requestedTotal = sum((line) => line.requested);
  const deductedTotal = sum((line) => line.deducted);
  const report: DeductionReturnReport = {
    payroll_id: payroll.id,
    pay_date: payDate,
    pay_period: file.pay_period,
    currency,
    file_version: file.file_version,
    file_sha256: sha256,
    dry_run: request.dryRun,
    partial: request.partial,
    outcome,
    applied: false,
    rows: check.rows,
    confirmed: lines.length,
    in_full: lines.filter((line) => line.deducted > 0 && line.deducted === line.requested).length,
    partly: lines.filter((line) => line.deducted > 0 && line.deducted < line.requested).length,
    not_deducted: lines.filter((line) => line.deducted === 0).length,
    over_deducted: lines.filter((line) => line.deducted > line.requested).length,
    leavers: lines.filter((line) => line.leaver).length,
    stops_not_deducted: check.lines.length - lines.length,
    rejected: check.rejectedRows,
    requested_total: toMajorUnits(requestedTotal, currency),
    deducted_total: toMajorUnits(deductedTotal, currency),
    error_count: check.errors.length,
    errors_truncated: check.errors.length > RETURN_ERROR_LIMIT,
    errors: check.errors.slice(0, RETURN_ERROR_LIMIT),
    warnings: check.warnings.slice(0, RETURN_ERROR_LIMIT),
    confirmation_id: null,
    import_id: null,
    previous_import: previous
      ? { id: previous.id, imported_at: isoInstant(previous.imported_at), imported_by: previous.imported_by, confirmation_id: previous.confirmation_id }
      : null,
  };
  if (refused && !request.dryRun) throw new DeductionReturnRejected(report, refusalDetail(check));
  if (outcome !== 'confirmed') return report;

  // What the provider would have posted: one line per employee, in major units, against the deduction data the instruction file was written from.
  const submission: ConfirmationSubmission = {
    deduction_data_id: file.snapshot_id,
    pay_period: file.pay_period,
    currency,
    total_amount: toMajorUnits(deductedTotal, currency),
    deductions: lines.map((line) => ({ employee_id: line.employeeId, deducted_amount: toMajorUnits(line.deducted, currency), leaver: line.leaver })),
  };
  const confirmation = await confirmPayDate(trx, submitter, payroll.id, submission, request.limits);
  const actor = submitter.kind === 'provider' ? clientActor(submitter.caller.clientId) : submitter.actor;
  const imported = await insertReturnImport(trx, {
    payroll_id: payroll.id,
    pay_date: payDate,
    instruction_file_id: file.id,
    confirmation_id: confirmation.confirmation.id,
    file_sha256: sha256,
    partial: request.partial,
    rows: report.rows,
    confirmed: report.confirmed,
    rejected: report.rejected,
    error_count: report.error_count,
    imported_by: describeActor(actor),
  });
  report.applied = true;
  report.confirmation_id = confirmation.confirmation.id;
  report.import_id = imported.id;
  const { errors: _errors, warnings: _warnings, ...summary } = report;
  await recordAction(trx, {
    actor,
    action: 'deduction_return.imported',
    resourceType: 'payroll',
    resourceId: payroll.id,
    reason: request.reason ?? null,
    after: summary,
  });
  return report;
}

/** Whether every line is what the employee's counting record already says (its content hash), so confirming it would change nothing. */
async function alreadyReported(trx: Executor, payrollId: string, payDate: string, currency: string, lines: readonly ReturnLine[]): Promise<boolean> {
  const current = new Map(
    (
      await listCurrentRecordHashes(
        trx,
        payrollId,
        payDate,
        lines.map((line) => line.employeeId),
      )
    ).map((row) => [row.employee_id, row.content_hash]),
  );
  return lines.every(
    (line) =>
      current.get(line.employeeId) ===
      deductionContentHash({ employeeId: line.employeeId, deductionAmount: line.deducted, currency, leaver: line.leaver, requestedPayments: [] }),
  );
}
