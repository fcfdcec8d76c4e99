import type { StatementFormat } from '../db/tables.ts';
import { InvalidError } from '../shared/domain-errors.ts';

export type { StatementFormat };

/** Where in the file a refusal points: 1-based line, and column where the format has one (XML). */
export interface FilePosition {
  line: number;
  column?: number;
}

/** One booked entry of a statement, as the bank wrote it; amounts in minor units of `currency`, always positive. */
export interface StatementEntry {
  position: FilePosition;
  /** The bank's own unique reference of the entry (camt AcctSvcrRef, else NtryRef; CSV bank_reference). */
  bankReference: string;
  direction: 'credit' | 'debit';
  amount: number;
  currency: string;
  /** YYYY-MM-DD */
  bookingDate: string;
  valueDate: string | null;
  /** The payer's reference: camt RmtInf (Strd/CdtrRefInf/Ref, else Ustrd joined); CSV reference. */
  remittanceInformation: string | null;
  debtorName: string | null;
  debtorAccount: string | null;
}

/** A whole statement file, checked: one account, one currency, no duplicate entry, positive amounts. */
export interface ParsedStatement {
  format: StatementFormat;
  /** camt.053 Stmt/Id, camt.054 Ntfctn/Id, CSV statement_id column (the same on every row). */
  statementId: string;
  /** The collection account the statement is of: UK sort code (NN-NN-NN) and 8-digit account number. */
  account: { sortCode: string; accountNumber: string };
  /** The account's currency (camt Acct/Ccy, CSV currency); every entry is in it. */
  currency: string;
  entries: StatementEntry[];
}

/** A statement refused whole, with where and why; nothing of it is imported. */
export class StatementRejected extends InvalidError {
  constructor(
    detail: string,
    readonly position?: FilePosition,
  ) {
    super('statement-rejected', position ? `${detail} (line ${position.line}${position.column ? `, column ${position.column}` : ''})` : detail, {
      title: 'Bank statement rejected',
      members: position ? { line: position.line, ...(position.column ? { column: position.column } : {}) } : {},
    });
  }
}
