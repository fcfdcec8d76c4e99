import { fromMajorUnits } from '../../platform/money/major-units.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import type { DeductionReturnReport } from './return-resource.ts';

// What a person reads of a return file import, at the CLI and in the console: the same words, money as
// people read it (formatMoney: £31.42).

const money = (major: number, currency: string) => formatMoney(fromMajorUnits(major, currency), currency);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What the good items say: how many were deducted in full, in part, not at all, over; leavers; the totals. */
export function describeReturnFigures(report: DeductionReturnReport): string {
  const parts = [
    `${report.in_full} in full`,
    `${report.partly} partly`,
    `${report.not_deducted} not deducted`,
    ...(report.over_deducted > 0 ? [`${report.over_deducted} over`] : []),
    plural(report.leavers, 'leaver'),
  ];
  return `${plural(report.confirmed, 'employee')} (${parts.join(', ')}): ${money(report.deducted_total, report.currency)} deducted of ${money(report.requested_total, report.currency)} asked`;
}

/** The first line of the report: what happened, or would. */
export function describeReturnHeadline(report: DeductionReturnReport): string {
  const where = `pay date ${report.pay_date} (instruction file version ${report.file_version})`;
  const bad = report.rejected > 0 ? `; ${plural(report.rejected, 'bad item')} left out` : '';
  switch (report.outcome) {
    case 'confirmed':
      return `Confirmed ${where}: ${describeReturnFigures(report)}${bad}`;
    case 'would_confirm':
      return `Dry run, nothing written: would confirm ${where}: ${describeReturnFigures(report)}${bad}`;
    case 'already_reported':
      return `${report.dry_run ? 'Dry run: nothing would change' : 'Already imported, nothing changed'}: the current records of ${where} already say what this file says`;
    case 'nothing_to_confirm':
      return `${report.dry_run ? 'Dry run, nothing written' : 'Nothing confirmed'}: the file reports nothing for ${where}${bad}`;
    case 'refused':
      return `${report.dry_run ? 'Dry run: the import would be refused' : 'Refused, nothing confirmed'}: ${plural(report.error_count, 'error')} in ${plural(report.rows, 'item')} (${report.rejected} bad)`;
  }
}

/**
 * The whole report for a person: the headline, the file's digest, what came of an earlier import of
 * the same file, each warning and error with its line and column, and where every error went.
 */
export function describeReturnImport(report: DeductionReturnReport, errorsFile?: string): string {
  const lines = [describeReturnHeadline(report), `  file sha256 ${report.file_sha256}`];
  if (report.confirmation_id) lines.push(`  confirmation ${report.confirmation_id} (import ${report.import_id}); reconciliation follows`);
  if (report.stops_not_deducted > 0) lines.push(`  ${plural(report.stops_not_deducted, 'stopped deduction')} with nothing deducted: nothing to confirm for them`);
  if (report.previous_import) {
    lines.push(`  this file was imported before: ${report.previous_import.id} at ${report.previous_import.imported_at} by ${report.previous_import.imported_by}`);
  }
  const where = (entry: { line: number; column: string | null }) => `line ${entry.line}${entry.column === null ? '' : `, ${entry.column}`}`;
  for (const warning of report.warnings) lines.push(`  warning: ${where(warning)}: ${warning.reason}`);
  for (const error of report.errors) lines.push(`  ${where(error)}: ${error.reason}`);
  if (errorsFile !== undefined && report.error_count > 0) lines.push(`  all ${report.error_count} errors are in ${errorsFile}`);
  else if (report.errors_truncated)
    lines.push(`  ... ${report.error_count - report.errors.length} more errors not listed; --errors-out FILE writes every one (line,column,reason)`);
  return lines.join('\n');
}
