import { createHash } from 'node:crypto';
import { stringify } from 'csv-stringify/sync';
import { formatMinorUnits } from '../money/major-units.ts';
import { neutraliseFormula } from '../shared/csv-cells.ts';
import type { NewInstructionItem } from './instruction-repository.ts';

export const instructionFileColumns = [
  'employee_id',
  'payroll_reference',
  'amount',
  'currency',
  'payment_reference',
  'pay_period',
  'action',
  'previous_amount',
] as const;

/** The CSV an employer's payroll team works from: one row per employee, money as decimal strings. */
export function renderInstructionFile(items: readonly NewInstructionItem[]): Buffer {
  const rows = items.map((item) => [
    item.employee_id,
    // The provider's and the calendar's text: a payroll clerk opens this file in a spreadsheet.
    neutraliseFormula(item.payroll_reference),
    formatMinorUnits(item.amount, item.currency),
    item.currency,
    neutraliseFormula(item.payment_reference ?? ''),
    neutraliseFormula(item.pay_period),
    item.action,
    item.previous_amount === null ? '' : formatMinorUnits(item.previous_amount, item.currency),
  ]);
  return Buffer.from(stringify(rows, { header: true, columns: [...instructionFileColumns] }), 'utf8');
}

export function sha256Hex(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export function instructionFileName(payrollExternalId: string, payDate: string, version: number): string {
  const safe = payrollExternalId.replace(/[^A-Za-z0-9_-]/g, '_');
  return `instructions-${safe}-${payDate}-v${version}.csv`;
}
