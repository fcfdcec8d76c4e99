import { currencyExponent } from './currency.ts';

// Payroll exchanges carry money as major-unit JSON numbers (125.5 for GBP 125.50) while everything else
// holds integer minor units. The conversions below never multiply or divide money as floats: they move
// the decimal point in a string and let Number()/String() do the only float step, which is exact for
// decimals of at most 15 significant digits (IEEE 754 binary64 guarantees 15; at 16 and 17 digits two
// different amounts can share one double, so "12345678901234.57" could come back as ...56).

/**
 * Largest magnitude, in minor units, that survives the trip through a JSON number exactly for every
 * currency: 15 digits. GBP 9,999,999,999,999.99 is far beyond any salary deduction, so refusing more
 * costs nothing and keeps both directions provably exact and symmetric.
 */
export const MAX_EXACT_MINOR_UNITS = 999_999_999_999_999;

export class TooManyDecimalsError extends Error {
  override readonly name = 'TooManyDecimalsError';
  readonly value: number;
  readonly currency: string;
  /** Decimal places the currency allows (its ISO 4217 exponent). */
  readonly exponent: number;

  constructor(value: number, currency: string, exponent: number) {
    const allowed = exponent === 0 ? 'no decimal places' : `at most ${exponent} decimal place${exponent === 1 ? '' : 's'}`;
    super(`${String(value)} has more decimal places than ${currency} allows (${allowed})`);
    this.value = value;
    this.currency = currency;
    this.exponent = exponent;
  }
}

function assertExactMinorUnits(minor: number): void {
  if (!Number.isSafeInteger(minor)) {
    throw new RangeError(`Minor units must be a safe integer, got ${String(minor)}`);
  }
  if (Math.abs(minor) > MAX_EXACT_MINOR_UNITS) {
    throw new RangeError(`Minor units ${String(minor)} exceed ${MAX_EXACT_MINOR_UNITS}, the largest amount a JSON number carries exactly`);
  }
}

/** Thrown where an exact total (a BigInt) is too large for the number the rest of the code carries. */
export class AmountOutOfRangeError extends RangeError {
  override readonly name = 'AmountOutOfRangeError';
}

/**
 * A total summed exactly (numeric in PostgreSQL, read as a BigInt) as minor units the code can carry,
 * or AmountOutOfRangeError naming what it is: never a rounded number.
 */
export function exactMinorUnits(total: bigint, what: string): number {
  if (total > BigInt(Number.MAX_SAFE_INTEGER) || total < -BigInt(Number.MAX_SAFE_INTEGER)) {
    // Said without the figure: past 2^53 it is no amount a person could act on, and the currency is not known here.
    throw new AmountOutOfRangeError(`${what} adds up to more than the service carries exactly (past 2^53 of the currency's smallest unit)`);
  }
  return Number(total);
}

/** Sign and digits of |minor| split at the currency's decimal point; `fraction` has exactly `exponent` digits. */
function splitMinorUnits(minor: number | bigint, exponent: number): { negative: boolean; whole: string; fraction: string } {
  // String() of a bigint, or of an integer number below 1e21, is plain digits, so this is digit
  // manipulation, not arithmetic.
  const negative = minor < 0;
  const digits = String(negative ? -minor : minor).padStart(exponent + 1, '0');
  const cut = digits.length - exponent;
  return { negative, whole: digits.slice(0, cut), fraction: digits.slice(cut) };
}

/** Exact major-unit JSON number for an integer amount of minor units: 12550 GBP -> 125.5, 1234 BHD -> 1.234. */
export function toMajorUnits(minor: number, currency: string): number {
  const exponent = currencyExponent(currency);
  assertExactMinorUnits(minor);
  if (minor === 0) return 0; // never -0, which JSON would print as 0 but Object.is would not equal
  const { negative, whole, fraction } = splitMinorUnits(minor, exponent);
  const trimmed = fraction.replace(/0+$/, '');
  const decimal = `${negative ? '-' : ''}${whole}${trimmed === '' ? '' : `.${trimmed}`}`;
  return Number(decimal);
}

/**
 * Fixed-point decimal string for CSVs and messages: 12550 GBP -> "125.50", 5 JPY -> "5", -1 GBP -> "-0.01".
 * Takes a bigint too, for totals over many amounts, which can pass the safe-integer range.
 */
export function formatMinorUnits(minor: number | bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  // No 15-digit cap here: a string is exact at any size; a number must only be a safe integer.
  if (typeof minor === 'number' && !Number.isSafeInteger(minor)) {
    throw new RangeError(`Minor units must be a safe integer, got ${String(minor)}`);
  }
  const { negative, whole, fraction } = splitMinorUnits(minor, exponent);
  const sign = negative ? '-' : '';
  return exponent === 0 ? `${sign}${whole}` : `${sign}${whole}.${fraction}`;
}

// String(n) of a finite number: optional sign, digits, optional fraction, optional exponent ("1e-7",
// "1.5e+21"). Anchored so anything unexpected fails instead of being half-parsed.
const NUMBER_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/**
 * Integer minor units for an inbound major-unit JSON number, read from its shortest decimal
 * representation (the digits the sender most plausibly wrote). 125.5 GBP -> 12550; 125.555 GBP throws
 * TooManyDecimalsError, which the API reports as 422.
 */
export function fromMajorUnits(major: number, currency: string): number {
  const exponent = currencyExponent(currency);
  if (typeof major !== 'number' || !Number.isFinite(major)) {
    throw new RangeError(`Amount must be a finite number, got ${String(major)}`);
  }
  const match = NUMBER_TEXT.exec(String(major));
  if (match === null) throw new RangeError(`Amount ${String(major)} is not a plain decimal number`);
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;

  // value = digits x 10^scale; strip trailing zeros so 1e21 and 100 are judged on significant digits.
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  let scale = Number(exponentText) - fraction.length;
  const significant = digits.replace(/0+$/, '');
  scale += digits.length - significant.length;
  digits = significant;
  if (digits === '') return 0;

  const shift = scale + exponent; // power of ten on `digits` once expressed in minor units
  if (shift < 0) throw new TooManyDecimalsError(major, currency, exponent);
  // A 16+ digit string cannot be a 15-digit amount; checked before padding so 1e300 builds no huge string.
  if (digits.length + shift > String(MAX_EXACT_MINOR_UNITS).length) {
    throw new RangeError(`Amount ${String(major)} ${currency} exceeds ${MAX_EXACT_MINOR_UNITS} minor units, the largest carried exactly`);
  }
  const magnitude = Number(`${digits}${'0'.repeat(shift)}`);
  return sign === '-' ? -magnitude : magnitude;
}

/** Alias read at call sites that validate inbound payloads. */
export const parseMajorUnits = fromMajorUnits;
