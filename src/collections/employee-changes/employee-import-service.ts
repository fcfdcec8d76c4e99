import { lineErrorAsFieldError } from '../../platform/shared/json-pointer.ts';
import { createHash, randomUUID } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';
import { describeActor, recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isoInstant, isUuid } from '../../platform/shared/schemas.ts';
import { findEmployeeOnPayroll, findPayrollWithEmployer } from '../../directory/payrolls/directory-repository.ts';
import { toEmployeeUpdatePayload, type EmployeeUpdatePayload } from '../../directory/payrolls/employee-resource.ts';
import {
  analyzeImportStaging,
  applyImportSlice,
  classifyImportSlice,
  countRejectedImportRows,
  countStagedImportRows,
  createImportStaging,
  findImportCandidates,
  findLatestImportOfFile,
  insertImportRun,
  listMandatedEmployeesOfSlice,
  listRepeatedRows,
  advisoryLockPayrollForImport,
  markRepeatedRows,
  nextImportSliceEnd,
  stageImportRows,
  type StagedImportRow,
} from './employee-import-repository.ts';
import type { ImportErrorSink } from '../../directory/payrolls/employee-import-error-file.ts';
import type { EmployeeImportReport } from '../../directory/payrolls/employee-import-resource.ts';
import {
  CappedErrorList,
  matchImportedEmployee,
  readImportHeader,
  validateImportRow,
  type ImportError,
  type BadRowKeys,
  type ImportHeader,
  type RowValidation,
} from '../../directory/payrolls/employee-import-rules.ts';
import { followEmploymentChange } from './employment-change.ts';

/** Rows read, checked and staged together: large enough for set-based statements, small enough to stay constant in memory. */
export const IMPORT_BATCH_ROWS = 5_000;
/** Errors a report lists; the rest are counted (and all of them go to the request's errorSink, if any). */
export const IMPORT_ERROR_LIMIT = 1_000;

export type EmployeeImportProgress = { phase: 'reading'; bytes: number; rows: number } | { phase: 'applying'; rows: number; total: number };

export interface EmployeeImportRequest {
  payrollId: string;
  /** The CSV file as bytes; read once, as a stream. */
  source: Readable;
  dryRun: boolean;
  /** Apply the good rows even when some are bad. */
  partial: boolean;
  actor: Actor;
  reason?: string | null;
  onProgress?: (progress: EmployeeImportProgress) => void;
  /** Gets every error, however many: the report keeps only the first IMPORT_ERROR_LIMIT. */
  errorSink?: ImportErrorSink;
}

/** A file with bad rows, imported all-or-nothing: nothing was applied, and the report says why. */
export class EmployeeImportRejected extends InvalidError {
  constructor(readonly report: EmployeeImportReport) {
    super(
      'employee-import-rejected',
      `${report.rejected} of ${report.rows} rows are bad (${report.error_count} errors, all found in this one pass); nothing was imported. ` +
        `Fix them, or import the ${report.rows - report.rejected} good row${report.rows - report.rejected === 1 ? '' : 's'} alone with partial application (--partial, or partial=true over the API); ` +
        '--errors-out FILE (errors=all over the API) lists every error',
      {
        errors: report.errors.map(lineErrorAsFieldError),
        members: {
          rows: report.rows,
          rejected: report.rejected,
          error_count: report.error_count,
          errors_truncated: report.errors_truncated,
          file_sha256: report.file_sha256,
        },
      },
    );
  }
}

interface ImportScope {
  payrollId: string;
  providerId: string;
  employerId: string;
  currency: string;
}

/**
 * Imports a payroll's employees and employments from a CSV file (see employee-import-rules.ts for
 * its layout and rules), upserting by payroll reference, in the caller's transaction:
 * 1. the file is streamed through the parser; every column of every row is checked on its own, and
 *    each batch of rows is matched to the employees they are about (bad rows too, as far as their
 *    good cells allow) and staged; bad cells and refused matches are reported (line, column, reason);
 * 2. rows repeating an earlier row's payroll reference or national registration number are bad too,
 *    whatever else is wrong with either: every error of every row is found in one pass;
 * 3. unless it is a dry run, or rows are bad and partial application was not asked for (then
 *    EmployeeImportRejected), the good rows are applied slice by slice with set-based statements,
 *    and each change to an employee with live mandates has the consequences a provider's push has
 *    (followEmploymentChange: events, mandates ended or suspended, payments cancelled).
 * What a row says is its payroll's: it goes to that employment, and to the person only for who they
 * are (decision 0015); an empty cell keeps what is stored. A row equal to what is stored writes
 * nothing, so importing the same file again changes nothing, whatever another payroll's file did
 * in between.
 * Applied imports that change something are recorded (file sha256, counts, who, when) and
 * audited; one that changes nothing leaves no record. Every error goes to request.errorSink as it
 * is found (in line order, rows repeating earlier ones last); the report lists the first
 * IMPORT_ERROR_LIMIT.
 */
export async function importEmployees(trx: Executor, request: EmployeeImportRequest): Promise<EmployeeImportReport> {
  const startedAt = new Date();
  const payroll = isUuid(request.payrollId) ? await findPayrollWithEmployer(trx, request.payrollId) : undefined;
  if (!payroll) {
    request.source.resume();
    throw new NotFoundError(`Payroll ${request.payrollId}`);
  }
  const scope: ImportScope = { payrollId: payroll.id, providerId: payroll.payroll_provider_id, employerId: payroll.employer_id, currency: payroll.currency };

  await advisoryLockPayrollForImport(trx, scope.payrollId);
  await createImportStaging(trx);
  const errors = new ErrorReporter(request.errorSink);
  const read = await readAndStage(trx, scope, request, errors);
  await analyzeImportStaging(trx);

  await markRepeatedRows(trx);
  // Found only once the whole file is staged, so they follow the other errors.
  for (let afterLine = 0; ;) {
    const repeated = await listRepeatedRows(trx, afterLine, IMPORT_BATCH_ROWS);
    if (repeated.length === 0) break;
    await errors.report(
      repeated.flatMap((row) => [
        ...(row.referenceRepeats === null ? [] : [{ line: row.line, column: 'payroll_reference', reason: `repeats the payroll reference of line ${row.referenceRepeats}` }]),
        ...(row.numberRepeats === null
          ? []
          : [{ line: row.line, column: 'national_registration_number', reason: `repeats the national registration number of line ${row.numberRepeats}` }]),
      ]),
    );
    afterLine = repeated.at(-1)!.line;
  }
  const rejected = await countRejectedImportRows(trx);

  const apply = !request.dryRun && (rejected === 0 || request.partial);
  const previous = await findLatestImportOfFile(trx, scope.payrollId, read.sha256);
  const report: EmployeeImportReport = {
    payroll_id: scope.payrollId,
    file_sha256: read.sha256,
    dry_run: request.dryRun,
    partial: request.partial,
    applied: apply,
    rows: read.rows,
    created: 0,
    updated: 0,
    unchanged: 0,
    left: 0,
    rejected,
    error_count: errors.listed.count,
    errors_truncated: errors.listed.truncated,
    errors: errors.listed.sorted(),
    import_id: null,
    previous_import: previous ? { id: previous.id, finished_at: isoInstant(previous.finished_at), imported_by: previous.imported_by } : null,
  };
  if (!request.dryRun && !apply) throw new EmployeeImportRejected(report);

  const total = await countStagedImportRows(trx);
  let done = 0;
  for (let afterLine = 0; ;) {
    const lastLine = await nextImportSliceEnd(trx, afterLine, IMPORT_BATCH_ROWS);
    if (lastLine === undefined) break;
    const slice = { afterLine, lastLine };
    const counts = await classifyImportSlice(trx, scope, slice);
    report.created += counts.created;
    report.updated += counts.updated;
    report.unchanged += counts.unchanged;
    report.left += counts.left;
    if (apply) await applySlice(trx, scope, slice);
    done += counts.created + counts.updated + counts.unchanged;
    request.onProgress?.({ phase: 'applying', rows: done, total });
    afterLine = lastLine;
  }

  // A file that changes nothing (the same file again, typically) leaves no trace: no run, no audit entry.
  const changedSomething = report.created + report.updated + report.left > 0;
  if (apply && changedSomething) {
    const run = await insertImportRun(trx, {
      payroll_id: scope.payrollId,
      file_sha256: read.sha256,
      partial: request.partial,
      rows: report.rows,
      created: report.created,
      updated: report.updated,
      unchanged: report.unchanged,
      left_count: report.left,
      rejected: report.rejected,
      error_count: report.error_count,
      imported_by: describeActor(request.actor),
      started_at: startedAt,
    });
    report.import_id = run.id;
    const { errors: _listed, ...summary } = report;
    await recordAction(trx, {
      actor: request.actor,
      action: 'employees.imported',
      resourceType: 'payroll',
      resourceId: scope.payrollId,
      reason: request.reason ?? null,
      after: summary,
    });
  }
  return report;
}

/** Writes one slice; employees with live mandates are looked at before and followed after, as a push is. */
async function applySlice(trx: Executor, scope: ImportScope, slice: { afterLine: number; lastLine: number }): Promise<void> {
  const mandated = await listMandatedEmployeesOfSlice(trx, scope.payrollId, slice);
  const before = new Map<string, EmployeeUpdatePayload | null>();
  for (const employeeId of mandated) {
    const row = await findEmployeeOnPayroll(trx, employeeId, scope.payrollId);
    before.set(employeeId, row ? toEmployeeUpdatePayload(row) : null);
  }
  try {
    await applyImportSlice(trx, scope, slice);
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new InvalidError('employee-import-conflict', 'An employee or payroll reference of the file was changed by someone else during the import; import the file again');
    }
    throw error;
  }
  for (const [employeeId, payload] of before) {
    await followEmploymentChange(trx, { employeeId, payrollId: scope.payrollId, before: payload });
  }
}

/** Every error goes to the sink, if any; the report lists the first IMPORT_ERROR_LIMIT and counts the rest. */
class ErrorReporter {
  readonly listed = new CappedErrorList(IMPORT_ERROR_LIMIT);

  constructor(private readonly sink: ImportErrorSink | undefined) {}

  async report(errors: readonly ImportError[]): Promise<void> {
    for (const error of errors) this.listed.add(error);
    await this.sink?.write(errors);
  }
}

interface ReadOutcome {
  sha256: string;
  rows: number;
}

/** Streams the file through the parser, checking every row and staging each batch, bad rows with their keys. */
async function readAndStage(trx: Executor, scope: ImportScope, request: EmployeeImportRequest, errors: ErrorReporter): Promise<ReadOutcome> {
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  const parser = parse({ bom: true, info: true, relax_column_count: true, skip_empty_lines: true });

  let header: ImportHeader | undefined;
  let rows = 0;
  // The rows read since the last flush, good and bad: matched and staged together, and their errors
  // held until then, so that errors leave in line order, and never more than a batch's worth.
  let batch: CheckedRow[] = [];
  // csv-parse counts the line a record ends on; where it starts follows from the previous record's end and the empty lines between.
  let previousEnd = 0;
  let previousEmpty = 0;

  const flush = async () => {
    const { staged, errors: found } = await matchBatch(trx, scope, batch);
    await stageImportRows(trx, staged);
    // Stable: a row's own errors keep their column order, then what the directory says.
    await errors.report(found.sort((a, b) => a.line - b.line));
    batch = [];
  };

  // What the reading loop threw: when it stops early, the source still being read (an HTTP body)
  // is aborted, and the pipeline may reject with that AbortError instead of the reason.
  let stopped: unknown;
  try {
    await pipeline(request.source, tap, parser, async (records: AsyncIterable<{ record: string[]; info: { lines: number; empty_lines: number } }>) => {
      try {
        for await (const { record, info } of records) {
          const line = previousEnd + 1 + (info.empty_lines - previousEmpty);
          previousEnd = info.lines;
          previousEmpty = info.empty_lines;
          if (header === undefined) {
            const read = readImportHeader(record);
            if (read.errors.length > 0) {
              throw new InvalidError('invalid-import-header', 'The header line does not name the import columns; nothing was imported', {
                errors: read.errors.map(lineErrorAsFieldError),
              });
            }
            header = read.header;
            continue;
          }
          rows++;
          if (rows % IMPORT_BATCH_ROWS === 0) request.onProgress?.({ phase: 'reading', bytes, rows });
          batch.push({ line, validation: validateImportRow(record, header, line, scope.currency) });
          if (batch.length >= IMPORT_BATCH_ROWS) await flush();
        }
      } catch (error) {
        stopped = error;
        throw error;
      }
    });
  } catch (caught) {
    const error = stopped ?? caught;
    if (error instanceof CsvError) {
      throw new InvalidError('invalid-csv', `The file is not valid CSV: ${error.message}; nothing was imported`, {
        errors: [{ pointer: `/lines/${(error as CsvError & { lines?: number }).lines ?? previousEnd + 1}`, detail: error.message }],
      });
    }
    throw error;
  }
  if (header === undefined) {
    throw new InvalidError('empty-import-file', 'The file is empty: it needs a header line naming the columns', {
      errors: [{ pointer: '/lines/1', detail: 'is missing: the header line names the columns' }],
    });
  }
  if (batch.length > 0) await flush();
  request.onProgress?.({ phase: 'reading', bytes, rows });
  return { sha256: hash.digest('hex'), rows };
}

interface CheckedRow {
  line: number;
  validation: RowValidation;
}

/** What the checks across rows and against the directory read of a row, good or bad. */
function keysOf(validation: RowValidation): BadRowKeys {
  if (!validation.ok) return validation.keys;
  const employee = validation.employee;
  return {
    payroll_reference: employee.payroll_reference,
    national_registration_number: employee.national_registration_number,
    date_of_birth: employee.date_of_birth ?? null,
    family_name: employee.family_name,
  };
}

const NOTHING_GIVEN = {
  given_name: null,
  family_name: null,
  national_registration_number: null,
  date_of_birth: null,
  email_address: null,
  phone_number: null,
  postal_code: null,
  start_date: null,
  end_date: null,
  employment_status: null,
  contract_type: null,
  annualised_salary: null,
  currency: null,
} as const;

/**
 * Which employee each row of a batch is about, with one lookup per key for the whole batch. Bad
 * rows are looked up too, with what their good cells say, so that the directory's objections come
 * with their other errors; they are staged with their keys only, for the checks across rows.
 */
async function matchBatch(trx: Executor, scope: ImportScope, batch: readonly CheckedRow[]): Promise<{ staged: StagedImportRow[]; errors: ImportError[] }> {
  const keyed = batch.map((row) => ({ ...row, keys: keysOf(row.validation) }));
  const referenced = keyed.flatMap(({ keys }) => (keys.payroll_reference === null ? [] : [keys.payroll_reference]));
  const numbers = keyed.flatMap(({ keys }) => (keys.national_registration_number === null ? [] : [keys.national_registration_number]));
  const candidates = await findImportCandidates(trx, scope, { payrollReferences: referenced, nationalRegistrationNumbers: numbers });
  const byReference = new Map(candidates.byReference.map((holder) => [holder.payrollReference, holder]));
  const byNumber = new Map(candidates.byNationalRegistrationNumber.map((holder) => [holder.nationalRegistrationNumber, holder]));

  const staged: StagedImportRow[] = [];
  const errors: ImportError[] = [];
  for (const { line, validation, keys } of keyed) {
    const match =
      keys.payroll_reference === null
        ? ({ kind: 'undecided' } as const)
        : matchImportedEmployee(keys, {
            byReference: byReference.get(keys.payroll_reference),
            byNationalRegistrationNumber: keys.national_registration_number === null ? undefined : byNumber.get(keys.national_registration_number),
          });
    if (!validation.ok) errors.push(...validation.errors);
    if (match.kind === 'refused') errors.push(...match.errors.map((error) => ({ line, ...error })));
    if (!validation.ok || match.kind === 'refused' || match.kind === 'undecided') {
      staged.push({
        line,
        rejected: true,
        employeeId: null,
        newEmployee: null,
        ...NOTHING_GIVEN,
        payroll_reference: keys.payroll_reference,
        national_registration_number: keys.national_registration_number,
      });
      continue;
    }
    const employee = validation.employee;
    staged.push({
      line,
      rejected: false,
      employeeId: match.kind === 'new-employee' ? randomUUID() : match.employeeId,
      newEmployee: match.kind === 'new-employee',
      payroll_reference: employee.payroll_reference,
      given_name: employee.given_name,
      family_name: employee.family_name,
      national_registration_number: employee.national_registration_number,
      date_of_birth: employee.date_of_birth ?? null,
      email_address: employee.email_address ?? null,
      phone_number: employee.phone_number ?? null,
      postal_code: employee.postal_code ?? null,
      start_date: employee.start_date ?? null,
      end_date: employee.end_date ?? null,
      employment_status: employee.employment_status,
      contract_type: employee.contract_type ?? null,
      annualised_salary: employee.annualised_salary ?? null,
      currency: employee.currency,
    });
  }
  return { staged, errors };
}
