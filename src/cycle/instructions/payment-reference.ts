// Payment references travel through payroll software and the Bacs and Faster Payments schemes, which
// carry at most 18 characters of A-Z, 0-9, space, full stop, ampersand, solidus and hyphen, and refuse
// (or rewrite) anything else. Banks also refuse a reference with fewer than 6 letters or digits, one
// that does not start with a letter or digit, one that is a single character repeated, and one that
// starts with DDIC (reserved). Some banks strip every space and punctuation mark, and matching a bank
// statement credit normalises the same way, so both references below are letters and digits only.
//
// Neither reference is derived from a name, a payroll reference or a hash: those are unbounded, can
// hold any character, can change, and a hash can collide. Each is built from a number PostgreSQL
// assigns once and never reuses (an identity column, unique, with its largest value capped so the
// reference always fits), so two references can never be equal and a re-run builds the same one.
// The lock builds the same strings in SQL (src/cycle/snapshots/pay-date-lock-statement-repository.ts) from
// the formats below (DEDUCTION_REFERENCE_FORMAT, REMITTANCE_REFERENCE_FORMAT); the zero-padding and the
// pay date's YYMMDD are written in both languages, and test/cycle/snapshots/payment-references.test.ts
// compares the strings character for character.
//
// A remittance reference is also fixed width, so none is ever the start of another: bank credits are
// matched to remittances by reference, and banks cut references short, so with SDR261030P15 a prefix
// of SDR261030P150 a duplicate payment quoting P15 was taken for P150, another payroll's money. The
// payroll number is zero-padded to 8 digits rather than followed by a check character: 8 digits is
// what the numbering already allows (MAX_REMITTANCE_REFERENCE_NUMBER), so every reference is exactly
// the 18 characters Bacs carries, whereas a check character would need a 19th (or a lower cap on
// payroll numbers than the identity column already allows) and its own algorithm in TypeScript and SQL.
// References issued before (SDR261030P15) stay as they were sent: a re-run keeps the stored one.

export const BACS_REFERENCE_MAX_LENGTH = 18;

const BACS_CHARACTERS = /^[A-Z0-9 .&/-]*$/;
const LETTER_OR_DIGIT = /[A-Z0-9]/g;

/**
 * Whether a bank accepts `reference` as a payment reference: 6 to 18 characters of the Bacs character
 * set (A-Z, 0-9, space . & / -), at least 6 of them letters or digits and not all the same, starting
 * with a letter or digit, not ending with a space, not starting with DDIC.
 */
export function isBacsReference(reference: string): boolean {
  if (reference.length > BACS_REFERENCE_MAX_LENGTH || !BACS_CHARACTERS.test(reference)) return false;
  const lettersAndDigits = reference.match(LETTER_OR_DIGIT) ?? [];
  if (lettersAndDigits.length < 6 || new Set(lettersAndDigits).size === 1) return false;
  return /^[A-Z0-9]/.test(reference) && !reference.endsWith(' ') && !reference.startsWith('DDIC');
}

/**
 * employments.deduction_reference_number's largest value: 'SD' and 15 digits make 17 characters, and
 * every such number is exact in JavaScript.
 */
export const MAX_DEDUCTION_REFERENCE_NUMBER = 999_999_999_999_999;
/** payrolls.remittance_reference_number's largest value: 'SDR', YYMMDD, 'P' and 8 digits make 18 characters. */
export const MAX_REMITTANCE_REFERENCE_NUMBER = 99_999_999;

function assertReferenceNumber(value: number, max: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new RangeError(`${what} must be an integer from 1 to ${max}, got ${String(value)}`);
  }
}

/**
 * The payment reference of an employee's deduction on a payroll: 'SD' and the employment's deduction
 * reference number, zero-padded to at least 8 digits (SD00000042). It does not change from one pay
 * date to the next, so the reference a payroll clerk keyed with "new" is the one "amend" and "stop"
 * name, and it is unique across the installation, so also on every payroll pay date.
 */
export function deductionPaymentReference(deductionReferenceNumber: number): string {
  assertReferenceNumber(deductionReferenceNumber, MAX_DEDUCTION_REFERENCE_NUMBER, 'a deduction reference number');
  const { prefix, minDigits } = DEDUCTION_REFERENCE_FORMAT;
  return `${prefix}${String(deductionReferenceNumber).padStart(minDigits, '0')}`;
}

/** How many digits of the payroll's number a remittance reference carries: 'SDR', YYMMDD, 'P' and these make 18. */
export const REMITTANCE_REFERENCE_NUMBER_DIGITS = 8;

/** A deduction reference: the prefix, then the number zero-padded to at least minDigits (never cut). */
export const DEDUCTION_REFERENCE_FORMAT = { prefix: 'SD', minDigits: 8 } as const;

/**
 * A remittance reference: the prefix, the pay date as YYMMDD, the payroll's mark, then the payroll's
 * number zero-padded to minDigits (the numbering's largest value keeps it within them).
 */
export const REMITTANCE_REFERENCE_FORMAT = { prefix: 'SDR', payrollMark: 'P', minDigits: REMITTANCE_REFERENCE_NUMBER_DIGITS } as const;

/**
 * The reference an employer puts on the transfer of a payroll pay date's deductions to the collection
 * account: 'SDR', the pay date as YYMMDD, 'P' and the payroll's remittance reference number
 * zero-padded to 8 digits (SDR261030P00000017): always 18 characters, so no reference is a prefix of
 * another. Unique across the installation for each payroll pay date, and still unique once a bank
 * strips it to letters and digits. A pay date locked before this format keeps the reference it was
 * sent with on every later snapshot version (the lock reuses the stored one): build it only for a
 * pay date that has none yet.
 */
export function remittancePaymentReference(payDate: string, remittanceReferenceNumber: number): string {
  const date = /^\d{2}(\d{2})-(\d{2})-(\d{2})$/.exec(payDate);
  if (!date) throw new RangeError(`a pay date must be YYYY-MM-DD, got ${payDate}`);
  assertReferenceNumber(remittanceReferenceNumber, MAX_REMITTANCE_REFERENCE_NUMBER, 'a remittance reference number');
  const { prefix, payrollMark, minDigits } = REMITTANCE_REFERENCE_FORMAT;
  return `${prefix}${date[1]}${date[2]}${date[3]}${payrollMark}${String(remittanceReferenceNumber).padStart(minDigits, '0')}`;
}
