import type { StatementFormat } from '../db/tables.ts';
import { currencyExponent, isSupportedCurrency } from '../money/currency.ts';
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

// What both statement formats share: the rules that turn the bank's text into checked values. Each
// refuses with the position it was given, so a message always points at the entry that broke it.

const POSITIVE_DECIMAL = /^(\d+)(?:\.(\d+))?$/;
/** 15 digits of minor units is the most a JavaScript number holds exactly for every currency. */
const MAX_MINOR_DIGITS = 15;

/**
 * Minor units of a bank's decimal amount text ("1250.50" GBP -> 125050, "1250" JPY -> 1250). Only a
 * plain positive decimal is accepted: no sign, exponent, thousands separator or spaces, no more decimal
 * places than the currency has (a bank never books a fraction of a penny, so "10.005" GBP is a broken
 * file, not an amount to round), and never zero: a booked entry of nothing moves no money.
 */
export function statementAmountInMinorUnits(text: string, currency: string, position: FilePosition): number {
  const exponent = statementCurrencyExponent(currency, position);
  const match = POSITIVE_DECIMAL.exec(text);
  if (match === null) throw new StatementRejected(`amount "${text}" is not a positive decimal number`, position);
  const [, whole = '', fraction = ''] = match;
  if (fraction.length > exponent) {
    const allowed = exponent === 0 ? 'no decimal places' : `at most ${exponent} decimal place${exponent === 1 ? '' : 's'}`;
    throw new StatementRejected(`amount "${text}" has more decimal places than ${currency} allows (${allowed})`, position);
  }
  // Moving the decimal point in the string: "1250.5" GBP -> "125050", no float arithmetic.
  const digits = `${whole}${fraction.padEnd(exponent, '0')}`.replace(/^0+/, '');
  if (digits === '') throw new StatementRejected(`amount "${text}" is zero`, position);
  if (digits.length > MAX_MINOR_DIGITS) throw new StatementRejected(`amount "${text}" ${currency} is too large`, position);
  return Number(digits);
}

/** The currency's ISO 4217 exponent, or a refusal naming the unsupported code. */
export function statementCurrencyExponent(currency: string, position?: FilePosition): number {
  if (!isSupportedCurrency(currency)) throw new StatementRejected(`currency "${currency}" is not supported`, position);
  return currencyExponent(currency);
}

const GB_IBAN = /^GB(\d{2})([A-Z]{4})(\d{6})(\d{8})$/;

/** ISO 13616 check: the IBAN with its first four characters moved to the end, letters as 10..35, is 1 mod 97. */
export function ibanChecksumIsValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{1,30}$/.test(iban)) return false;
  const rearranged = `${iban.slice(4)}${iban.slice(0, 4)}`;
  let remainder = 0;
  for (const character of rearranged) {
    const value = Number.parseInt(character, 36);
    // A letter is two digits (A = 10), so it shifts the remainder by 100 rather than 10.
    remainder = (remainder * (value >= 10 ? 100 : 10) + value) % 97;
  }
  return remainder === 1;
}

/**
 * The UK sort code and account number inside a GB IBAN (GBkk BBBB SSSSSS AAAAAAAA), after checking its
 * checksum: a statement of an account we cannot name exactly must not be booked against any account.
 * Spaces are the printed form's grouping and are ignored.
 */
export function ukAccountFromIban(text: string, position: FilePosition): { sortCode: string; accountNumber: string } {
  const iban = text.replace(/\s+/g, '').toUpperCase();
  const match = GB_IBAN.exec(iban);
  if (match === null) throw new StatementRejected(`account IBAN "${text}" is not a UK (GB) IBAN`, position);
  if (!ibanChecksumIsValid(iban)) throw new StatementRejected(`account IBAN "${text}" fails its checksum`, position);
  const [, , , sortCode = '', accountNumber = ''] = match;
  return { sortCode: formatSortCode(sortCode), accountNumber };
}

/** A UK account written as 14 digits, sort code first (camt Othr/Id with scheme SCAN or BBAN). */
export function ukAccountFromDigits(text: string, position: FilePosition): { sortCode: string; accountNumber: string } {
  const digits = text.replace(/[\s-]/g, '');
  if (!/^\d{14}$/.test(digits)) {
    throw new StatementRejected(`account id "${text}" is not a 6-digit sort code followed by an 8-digit account number`, position);
  }
  return { sortCode: formatSortCode(digits.slice(0, 6)), accountNumber: digits.slice(6) };
}

/** "NN-NN-NN" from a sort code written with or without its dashes. */
export function ukSortCode(text: string, position: FilePosition): string {
  const digits = /^\d{2}-?\d{2}-?\d{2}$/.test(text) ? text.replace(/-/g, '') : null;
  if (digits === null) throw new StatementRejected(`sort code "${text}" is not 6 digits (NN-NN-NN)`, position);
  return formatSortCode(digits);
}

export function ukAccountNumber(text: string, position: FilePosition): string {
  if (!/^\d{8}$/.test(text)) throw new StatementRejected(`account number "${text}" is not 8 digits`, position);
  return text;
}

function formatSortCode(digits: string): string {
  return `${digits.slice(0, 2)}-${digits.slice(2, 4)}-${digits.slice(4, 6)}`;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * 'YYYY-MM-DD' of a statement date, or of a date-time as the bank wrote it (its own local date: the
 * bank books in its own day, so no time-zone conversion is applied). Impossible dates are refused.
 */
export function statementDate(text: string, what: string, position: FilePosition): string {
  const date = text.length > 10 && text[10] === 'T' ? text.slice(0, 10) : text;
  const match = ISO_DATE.exec(date);
  if (match !== null) {
    const [, year = '', month = '', day = ''] = match;
    const parsed = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
    if (parsed.getUTCFullYear() === Number(year) && parsed.getUTCMonth() === Number(month) - 1 && parsed.getUTCDate() === Number(day)) {
      return date;
    }
  }
  throw new StatementRejected(`${what} "${text}" is not a valid date (YYYY-MM-DD)`, position);
}

/** Refuses a second entry with a bank reference already seen in the file: the bank's reference is what makes a credit unique. */
export class BankReferences {
  readonly #seen = new Map<string, FilePosition>();

  add(reference: string, position: FilePosition): void {
    const first = this.#seen.get(reference);
    if (first !== undefined) {
      throw new StatementRejected(`duplicate bank reference "${reference}" (first at line ${first.line}${first.column ? `, column ${first.column}` : ''})`, position);
    }
    this.#seen.set(reference, position);
  }
}

/** Refuses an entry in another currency than the account's: a statement is of one account in one currency. */
export function checkEntryCurrency(entryCurrency: string, accountCurrency: string, position: FilePosition): void {
  if (entryCurrency !== accountCurrency) {
    throw new StatementRejected(`entry currency ${entryCurrency} differs from the account currency ${accountCurrency}`, position);
  }
}
