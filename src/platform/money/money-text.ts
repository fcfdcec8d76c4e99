import { currencyExponent } from './currency.ts';
import { formatMinorUnits, MAX_EXACT_MINOR_UNITS } from './major-units.ts';

// Money as people read and type it. The service holds integer minor units; a person reads £31.42,
// never 3142, and types 31.42. Both directions move the decimal point in a string: no float ever
// holds the money. CSV columns and the API's JSON keep their own forms (formatMinorUnits, toMajorUnits).

/**
 * Currencies written with a symbol before the amount. Only symbols nobody here misreads: `$` alone
 * would be as much CAD or AUD as USD, so USD is `US$`. Every other currency is written with its code
 * after the amount ("31.42 CHF").
 */
const SYMBOLS: ReadonlyMap<string, string> = new Map([
  ['GBP', '£'],
  ['EUR', '€'],
  ['USD', 'US$'],
]);

/** Thousands separated by commas, as UK finance writes them: "1234567" -> "1,234,567". */
function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+$)/g, ',');
}

/**
 * An amount as a person reads it, from integer minor units: 314200 GBP -> "£3,142.00", -1 GBP ->
 * "-£0.01", 1500 JPY -> "1,500 JPY", 1234 BHD -> "1.234 BHD". Always every decimal place the
 * currency has (ISO 4217), with its symbol or code: the one formatter of messages, the command line,
 * the console and the demo. Takes a bigint too, for totals that can pass the safe-integer range.
 */
export function formatMoney(minor: number | bigint, currency: string): string {
  const decimal = formatMinorUnits(minor, currency);
  const negative = decimal.startsWith('-');
  const [whole = '', fraction] = (negative ? decimal.slice(1) : decimal).split('.');
  const amount = fraction === undefined ? groupThousands(whole) : `${groupThousands(whole)}.${fraction}`;
  const sign = negative ? '-' : '';
  const symbol = SYMBOLS.get(currency);
  return symbol === undefined ? `${sign}${amount} ${currency}` : `${sign}${symbol}${amount}`;
}

/** An amount a person typed that cannot be read as one; the message says why, for the person to fix it. */
export class TypedAmountError extends Error {
  override readonly name = 'TypedAmountError';
}

const TYPED_AMOUNT = /^(\d+)(?:\.(\d+))?$/;

/**
 * Integer minor units from an amount a person typed in major units of `currency` ("31.42" GBP ->
 * 3142, "1500" JPY -> 1500, "1.234" BHD -> 1234), as the API's major-unit fields are read. Digits and
 * at most one decimal point only: no sign, symbol, thousands separator or exponent, never more
 * decimal places than the currency has (31.420 GBP is refused: a third decimal place is a typo or a
 * misunderstanding, not a zero to drop), more than zero, at most 15 digits. Throws TypedAmountError.
 */
export function parseTypedAmount(text: string, currency: string): number {
  const exponent = currencyExponent(currency);
  const typed = text.trim();
  const match = TYPED_AMOUNT.exec(typed);
  const example = exponent === 0 ? '1250' : `1250.${'5'.padEnd(exponent, '0')}`;
  if (!match) {
    throw new TypedAmountError(`"${text}" is not an amount in ${currency}: write it like ${example}, without a sign, currency symbol or separators`);
  }
  const [, whole = '', fraction = ''] = match;
  if (fraction.length > exponent) {
    const allowed = exponent === 0 ? 'no decimal places' : `at most ${exponent} decimal place${exponent === 1 ? '' : 's'}`;
    throw new TypedAmountError(`${typed} has more decimal places than ${currency} allows (${allowed})`);
  }
  const digits = `${whole}${fraction.padEnd(exponent, '0')}`.replace(/^0+/, '');
  if (digits === '') throw new TypedAmountError('an amount must be more than zero');
  if (digits.length > String(MAX_EXACT_MINOR_UNITS).length) {
    throw new TypedAmountError(`${typed} ${currency} is more than ${formatMoney(MAX_EXACT_MINOR_UNITS, currency)}, the largest amount the service carries`);
  }
  return Number(digits);
}

/**
 * formatMoney of an amount an API resource or a CSV already carries as a decimal string with exactly
 * the currency's decimal places ("125.50" GBP -> "£125.50"), read by its digits, never as a float.
 */
export function formatDecimalMoney(decimal: string, currency: string): string {
  const exponent = currencyExponent(currency);
  const shape = exponent === 0 ? /^-?\d+$/ : new RegExp(`^-?\\d+\\.\\d{${exponent}}$`);
  if (!shape.test(decimal)) throw new RangeError(`${JSON.stringify(decimal)} is not a ${currency} amount with ${exponent} decimal places`);
  return formatMoney(BigInt(decimal.replace('.', '')), currency);
}
