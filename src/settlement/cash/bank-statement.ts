import type { StatementFormat } from '../../platform/db/tables.ts';
import { currencyExponent, isSupportedCurrency } from '../../platform/money/currency.ts';
import { InvalidError } from '../../platform/shared/domain-errors.ts';

export type { StatementFormat };

/** Where in the file a refusal points: 1-based line, and column where the format has one (XML). */
export interface FilePosition {
  line: number;
  column?: number;
}

/** The ISO 20022 bank transaction code of an entry: Domn/Cd, Domn/Fmly/Cd, Domn/Fmly/SubFmlyCd ('PMNT', 'RCDT', 'ESCT'), and Prtry/Cd. */
export interface BankTransactionCode {
  domain: string | null;
  family: string | null;
  subFamily: string | null;
  proprietary: string | null;
}

/**
 * One booked entry of a statement, as the bank wrote it; amounts in minor units of `currency`, always
 * positive (zero only on an entry with a `problem`). An entry whose NtryDtls holds several TxDtls each
 * with its own amount (a batch) is given as one entry per TxDtls, each carrying `batch`.
 */
export interface StatementEntry {
  position: FilePosition;
  /** 0-based place of the entry in its statement, in document order (a batch's parts each have their own). */
  index: number;
  /**
   * The reference a person reads the entry by: AcctSvcrRef, else NtryRef, else `#<index + 1>`; a batch's
   * part adds `/<part>`. Not an identity: banks reuse NtryRef and some reuse AcctSvcrRef (see credit-identity.ts).
   */
  bankReference: string;
  /** Ntry/AcctSvcrRef (a batch part: its TxDtls/Refs/AcctSvcrRef when it has one, else the entry's). */
  accountServicerReference: string | null;
  /** Ntry/NtryRef. */
  entryReference: string | null;
  /**
   * The transaction references of the entry's TxDtls/Refs (EndToEndId, TxId, InstrId, MsgId, PmtInfId, MndtId, ChqNb, ClrSysRef,
   * and the others: UETR, Prtry/Ref...; not Refs/AcctSvcrRef, which is `accountServicerReference`; 'NOTPROVIDED' left out), in
   * document order, without duplicates.
   */
  transactionReferences: string[];
  /** Set on each part of a batch-booked entry: the lump sum the bank booked and where this part sits in it. */
  batch: { amount: number; part: number; parts: number } | null;
  /** As the bank wrote it (CdtDbtInd); 'credit' when it could not be read, always with a `problem`. */
  direction: 'credit' | 'debit';
  /** Ntry/RvslInd true: the entry reverses an earlier one of the opposite direction. */
  reversal: boolean;
  bankTransactionCode: BankTransactionCode | null;
  /** TxDtls/RtrInf present: the entry returns a payment; its reason code (Rsn/Cd or Rsn/Prtry), if given. */
  returnReason: string | null;
  /** Minor units of `currency`; 0 when the entry's amount could not be read (its `problem` says why). */
  amount: number;
  /** Ntry/Amt/@Ccy (else the account's; '' when neither is known, always with a `problem`). */
  currency: string;
  /**
   * YYYY-MM-DD. An entry with a `problem` whose BookgDt is missing or invalid gets its ValDt, else the
   * statement's own date (FrToDt/ToDtTm, else CreDtTm, else GrpHdr/CreDtTm), else '' (CSV: value_date, else '').
   */
  bookingDate: string;
  valueDate: string | null;
  /**
   * Everything the payer wrote, for matching: every Strd/CdtrRefInf/Ref, every Ustrd line, AddtlTxInf,
   * then AddtlNtryInf, joined by ' | ' (CSV: the reference column). Null when there is none.
   */
  remittanceInformation: string | null;
  debtorName: string | null;
  debtorAccount: string | null;
  /**
   * Why the entry cannot be booked as it stands (a zero amount, another currency than the account's,
   * a missing booking date...): it goes to the exceptions queue with this reason; the rest of the file is imported.
   */
  problem: string | null;
}

/** A statement's balance (Bal): type code (OPBD, CLBD, PRCD, ITBD, CLAV...), signed minor units, date. */
export interface StatementBalance {
  type: string;
  /** Signed (CRDT positive, DBIT negative) minor units of `currency`; at most 15 digits. */
  amount: number;
  /** Bal/Amt/@Ccy: the account's currency (checked against Acct/Ccy when the file gives one). Added for statements without Acct/Ccy. */
  currency: string;
  date: string | null;
  position: FilePosition;
}

/** A statement's own totals (TxsSummry), as far as the bank gave them; signed net in minor units. */
export interface StatementSummary {
  entries: { count: number | null; sum: number | null; net: number | null } | null;
  credits: { count: number | null; sum: number | null } | null;
  debits: { count: number | null; sum: number | null } | null;
}

/** One statement (camt.053 Stmt, camt.054 Ntfctn, or the CSV layout's rows), read and checked. */
export interface ParsedStatement {
  format: StatementFormat;
  /** camt.053 Stmt/Id, camt.054 Ntfctn/Id, CSV statement_id column (the same on every row). */
  statementId: string;
  /** Pagination (camt GrpHdr/MsgPgntn or Stmt/StmtPgntn): page 1 of 1 when the file has none. */
  page: { number: number; last: boolean };
  /** camt ElctrncSeqNb and LglSeqNb, as written (numbers in the schema, kept as decimal text). */
  electronicSequenceNumber: string | null;
  legalSequenceNumber: string | null;
  /** The collection account the statement is of: UK sort code (NN-NN-NN) and 8-digit account number. */
  account: { sortCode: string; accountNumber: string };
  /** The account's currency (camt Acct/Ccy, CSV currency); null when the file does not say (camt Acct/Ccy is optional). */
  currency: string | null;
  balances: StatementBalance[];
  summary: StatementSummary | null;
  entries: StatementEntry[];
}

/** A statement file: one or more statements (a camt file may hold several Stmt or Ntfctn). */
export interface ParsedStatementFile {
  format: StatementFormat;
  statements: ParsedStatement[];
}

/** A statement refused whole, with where and why; nothing of it is imported. */
export class StatementRejected extends InvalidError {
  constructor(
    detail: string,
    readonly position?: FilePosition,
  ) {
    super('statement-rejected', position ? `${detail} (line ${position.line}${position.column ? `, column ${position.column}` : ''})` : detail, {
      members: position ? { line: position.line, ...(position.column ? { column: position.column } : {}) } : {},
    });
  }
}

// What both statement formats share: the rules that turn the bank's text into checked values. A
// statement-level value that breaks them refuses the file, with the position it was given; an entry's
// value that breaks them becomes that entry's `problem` (the reading functions below say why, without throwing).

const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;
/** 15 digits of minor units is the most a JavaScript number holds exactly for every currency. */
const MAX_MINOR_DIGITS = 15;

/** What reading an amount gave: its minor units, or why it cannot be read. */
export type AmountReading = { minor: number; problem?: undefined } | { minor?: undefined; problem: string };

/**
 * Minor units of a bank's decimal amount text ("1250.50" GBP -> 125050, "1250" JPY -> 1250), or why it
 * cannot be read. Only a plain unsigned decimal is read: no sign, exponent, thousands separator or
 * spaces. Decimal places past the currency's are accepted when they are zeros ("4106.910" GBP is
 * 4106.91: banks pad to a fixed scale), refused otherwise (a bank never books a fraction of a penny,
 * so "10.005" GBP is a broken amount, not one to round). Zero only when `allowZero` (a balance, a
 * total): a booked entry of nothing moves no money. At most 15 digits of minor units.
 */
export function readStatementAmount(text: string, currency: string, options: { allowZero?: boolean } = {}): AmountReading {
  if (!isSupportedCurrency(currency)) return { problem: `currency "${currency}" is not supported` };
  const exponent = currencyExponent(currency);
  const match = PLAIN_DECIMAL.exec(text);
  if (match === null) return { problem: `amount "${text}" is not a positive decimal number` };
  const [, whole = '', fraction = ''] = match;
  if (fraction.length > exponent && !/^0*$/.test(fraction.slice(exponent))) {
    const allowed = exponent === 0 ? 'no decimal places' : `at most ${exponent} decimal place${exponent === 1 ? '' : 's'}`;
    return { problem: `amount "${text}" has more decimal places than ${currency} allows (${allowed})` };
  }
  // Moving the decimal point in the string: "1250.5" GBP -> "125050", no float arithmetic.
  const digits = `${whole}${fraction.slice(0, exponent).padEnd(exponent, '0')}`.replace(/^0+/, '');
  if (digits === '') return options.allowZero === true ? { minor: 0 } : { problem: `amount "${text}" is zero` };
  if (digits.length > MAX_MINOR_DIGITS) return { problem: `amount "${text}" ${currency} is too large` };
  return { minor: Number(digits) };
}

/** readStatementAmount for a value the file cannot do without: a refusal at `position` instead of a reason. */
export function statementAmountInMinorUnits(text: string, currency: string, position: FilePosition, options: { allowZero?: boolean } = {}): number {
  const reading = readStatementAmount(text, currency, options);
  if (reading.problem !== undefined) throw new StatementRejected(reading.problem, position);
  return reading.minor;
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
 * bank books in its own day, so no time-zone conversion is applied); null when it is not a real date.
 */
export function readStatementDate(text: string): string | null {
  const date = text.length > 10 && text[10] === 'T' ? text.slice(0, 10) : text;
  const match = ISO_DATE.exec(date);
  if (match === null) return null;
  const [, year = '', month = '', day = ''] = match;
  const parsed = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  const real = parsed.getUTCFullYear() === Number(year) && parsed.getUTCMonth() === Number(month) - 1 && parsed.getUTCDate() === Number(day);
  return real ? date : null;
}

/** Why a date text is refused: the entry's problem, or the statement's refusal. */
export function invalidDateReason(what: string, text: string): string {
  return `${what} "${text}" is not a valid date (YYYY-MM-DD)`;
}

/** readStatementDate for a date the file cannot do without: impossible dates are refused at `position`. */
export function statementDate(text: string, what: string, position: FilePosition): string {
  const date = readStatementDate(text);
  if (date === null) throw new StatementRejected(invalidDateReason(what, text), position);
  return date;
}
