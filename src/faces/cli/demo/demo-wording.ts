import type { RemittanceStatus } from '../../../platform/db/tables.ts';
import { formatMoney } from '../../../platform/money/money-text.ts';

/** The demo's money: pounds, as a finance clerk reads them. */
export const pounds = (minor: number | bigint) => formatMoney(minor, 'GBP');

// What the demo says about the things it shows, as a finance clerk reads them: derived from their
// data (a remittance's status and amounts), never written in beside it.

/** A payroll as it is named beside its employer: "weekly payroll" for "Acme Ltd weekly payroll". */
export function payrollLabel(employer: string, payroll: string): string {
  const own = payroll.toLowerCase().startsWith(`${employer.toLowerCase()} `) ? payroll.slice(employer.length + 1) : payroll;
  return own.trim() === '' ? payroll : own;
}

/** A remittance as its status describes it (`<status>: ...`): every status has its words, so a new one cannot be shown wrong. */
export function remittanceInWords(remittance: {
  status: RemittanceStatus;
  expected: number;
  received: number;
  shortfall: number;
  currency: string;
  due_date: string;
}): string {
  const money = (minor: number) => formatMoney(minor, remittance.currency);
  switch (remittance.status) {
    case 'expected':
      return `expected: ${money(remittance.expected)} due by ${remittance.due_date}`;
    case 'late':
      return `late: ${money(remittance.expected - remittance.received)} was due by ${remittance.due_date}`;
    case 'short':
      return `short: ${money(remittance.received)} of ${money(remittance.expected)} received, ${money(remittance.expected - remittance.received)} still owed`;
    case 'received':
      return `received: ${money(remittance.received)}, in full`;
    case 'over':
      return `over: ${money(remittance.received - remittance.expected)} more than the ${money(remittance.expected)} expected`;
    case 'shortfall':
      return `shortfall: ${money(remittance.shortfall)} paid out is owed back`;
  }
}
