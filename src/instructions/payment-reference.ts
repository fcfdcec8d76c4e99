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
// The freeze builds the same strings in SQL (src/snapshots/freeze-repository.ts); a test compares them.

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
  return `SD${String(deductionReferenceNumber).padStart(8, '0')}`;
}

/**
 * The reference an employer puts on the transfer of a payroll pay date's deductions to the collection
 * account: 'SDR', the pay date as YYMMDD, 'P' and the payroll's remittance reference number
 * (SDR261030P17). Unique across the installation for each payroll pay date, the same for every
 * snapshot version of it, and still unique once a bank strips it to letters and digits (the date is
 * always 6 digits).
 */
export function remittancePaymentReference(payDate: string, remittanceReferenceNumber: number): string {
  const date = /^\d{2}(\d{2})-(\d{2})-(\d{2})$/.exec(payDate);
  if (!date) throw new RangeError(`a pay date must be YYYY-MM-DD, got ${payDate}`);
  assertReferenceNumber(remittanceReferenceNumber, MAX_REMITTANCE_REFERENCE_NUMBER, 'a remittance reference number');
  return `SDR${date[1]}${date[2]}${date[3]}P${remittanceReferenceNumber}`;
}
