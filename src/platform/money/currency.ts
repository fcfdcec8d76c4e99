import { z } from 'zod';

// ISO 4217 minor-unit exponents ("E" column of ISO 4217 list one). The exponent is what turns the integer
// minor units we store into the major-unit JSON numbers payroll exchanges, so a wrong entry here would
// move money by a factor of ten or more: each value is copied from the standard, not from usage (HUF and
// CZK are 2 in ISO 4217 even though cash has no fillér/haléř; ISK is 0).
//
// Only currencies a UK salary-deduction provider could plausibly see are listed: adding one is a
// deliberate act, and an unknown code must fail loudly instead of silently defaulting to 2 decimals.
// Funds codes and precious metals (XAU, XDR...) have no exponent and are deliberately absent, except CLF,
// which has a real exponent of 4 and keeps that path exercised.
const EXPONENTS: ReadonlyMap<string, number> = new Map<string, number>([
  // exponent 2
  ['GBP', 2],
  ['EUR', 2],
  ['USD', 2],
  ['CHF', 2],
  ['SEK', 2],
  ['NOK', 2],
  ['DKK', 2],
  ['PLN', 2],
  ['CZK', 2],
  ['HUF', 2],
  ['RON', 2],
  ['GIP', 2],
  ['CAD', 2],
  ['AUD', 2],
  ['NZD', 2],
  ['HKD', 2],
  ['SGD', 2],
  ['CNY', 2],
  ['INR', 2],
  ['ZAR', 2],
  ['AED', 2],
  ['SAR', 2],
  ['QAR', 2],
  ['ILS', 2],
  ['TRY', 2],
  ['MXN', 2],
  ['BRL', 2],
  ['TWD', 2],
  ['THB', 2],
  ['MYR', 2],
  ['PHP', 2],
  ['IDR', 2],
  ['EGP', 2],
  ['NGN', 2],
  ['KES', 2],
  ['PKR', 2],
  // exponent 0
  ['JPY', 0],
  ['ISK', 0],
  ['KRW', 0],
  ['CLP', 0],
  ['VND', 0],
  ['UGX', 0],
  ['PYG', 0],
  ['RWF', 0],
  ['XAF', 0],
  ['XOF', 0],
  // exponent 3
  ['BHD', 3],
  ['KWD', 3],
  ['JOD', 3],
  ['OMR', 3],
  ['TND', 3],
  ['IQD', 3],
  ['LYD', 3],
  // exponent 4
  ['CLF', 4],
  ['UYW', 4],
]);

/** Every supported code, sorted, for error messages, docs and property tests. */
export const SUPPORTED_CURRENCIES: readonly string[] = Object.freeze([...EXPONENTS.keys()].sort());

export class UnknownCurrencyError extends Error {
  override readonly name = 'UnknownCurrencyError';
  readonly currency: string;

  constructor(currency: string) {
    super(`Unsupported currency ${JSON.stringify(currency)}: expected a supported ISO 4217 code`);
    this.currency = currency;
  }
}

export function isSupportedCurrency(code: string): boolean {
  return EXPONENTS.has(code);
}

/** Throws rather than guessing: amounts in an unknown currency cannot be converted safely. */
export function currencyExponent(code: string): number {
  const exponent = EXPONENTS.get(code);
  if (exponent === undefined) throw new UnknownCurrencyError(code);
  return exponent;
}

const CODE_SHAPE = /^[A-Z]{3}$/;

// One check with two messages, so a client learns whether it sent a malformed code or a well-formed one
// we do not handle, without zod reporting both for the same input.
export const currencyCodeSchema = z
  .string()
  .superRefine((value, ctx) => {
    if (!CODE_SHAPE.test(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be a three-letter uppercase ISO 4217 currency code' });
    } else if (!EXPONENTS.has(value)) {
      ctx.addIssue({ code: 'custom', message: `currency ${value} is not supported` });
    }
  })
  // The refinement gives the clearer refusal; the enum tells a client's generator the codes up front.
  .meta({
    id: 'Currency',
    description: `An ISO 4217 currency code this service supports (${EXPONENTS.size} of them), whose minor units amounts are counted in.`,
    enum: [...SUPPORTED_CURRENCIES],
    example: 'GBP',
  });
