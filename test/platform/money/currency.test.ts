import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { SUPPORTED_CURRENCIES, UnknownCurrencyError, currencyCodeSchema, currencyExponent, isSupportedCurrency } from '../../../src/platform/money/currency.ts';

// Expected values typed in from ISO 4217 list one, independently of the module's table.
const ISO_4217: ReadonlyArray<readonly [string, number]> = [
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
  ['BHD', 3],
  ['KWD', 3],
  ['JOD', 3],
  ['OMR', 3],
  ['TND', 3],
  ['IQD', 3],
  ['LYD', 3],
  ['CLF', 4],
  ['UYW', 4],
];

describe('currencyExponent', () => {
  it.each(ISO_4217)('%s has exponent %i', (code, exponent) => {
    expect(currencyExponent(code)).toBe(exponent);
    expect(isSupportedCurrency(code)).toBe(true);
  });

  it('supports exactly the listed currencies, sorted, at least 20 of them', () => {
    expect(SUPPORTED_CURRENCIES).toEqual(ISO_4217.map(([code]) => code).sort());
    expect(SUPPORTED_CURRENCIES.length).toBeGreaterThanOrEqual(20);
    expect(Object.isFrozen(SUPPORTED_CURRENCIES)).toBe(true);
  });

  it.each(['gbp', 'Gbp', 'GB', 'GBPX', '', ' GBP', 'XXX', 'XAU', 'XDR', 'ABC', 'constructor', '__proto__', 'toString'])('rejects %j with UnknownCurrencyError', (code) => {
    expect(isSupportedCurrency(code)).toBe(false);
    expect(() => currencyExponent(code)).toThrow(UnknownCurrencyError);
  });

  it('names the offending code on the error', () => {
    const error = (() => {
      try {
        currencyExponent('ZZZ');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(UnknownCurrencyError);
    expect(error).toBeInstanceOf(Error);
    expect((error as UnknownCurrencyError).currency).toBe('ZZZ');
    expect((error as UnknownCurrencyError).name).toBe('UnknownCurrencyError');
    expect((error as UnknownCurrencyError).message).toContain('"ZZZ"');
  });

  it('property: isSupportedCurrency agrees with currencyExponent for any string', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom(...SUPPORTED_CURRENCIES)), (code) => {
        if (isSupportedCurrency(code)) {
          expect([0, 2, 3, 4]).toContain(currencyExponent(code));
        } else {
          expect(() => currencyExponent(code)).toThrow(UnknownCurrencyError);
        }
      }),
    );
  });
});

describe('currencyCodeSchema', () => {
  it.each(SUPPORTED_CURRENCIES)('accepts %s', (code) => {
    expect(currencyCodeSchema.parse(code)).toBe(code);
  });

  it.each(['gbp', 'GB', 'GBPP', 'G1P', '', 'GBP '])('rejects malformed %j with a shape message', (code) => {
    const result = currencyCodeSchema.safeParse(code);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    expect(result.error?.issues[0]?.message).toBe('must be a three-letter uppercase ISO 4217 currency code');
  });

  it.each(['XXX', 'XAU', 'ABC'])('rejects well-formed but unsupported %s naming it', (code) => {
    const result = currencyCodeSchema.safeParse(code);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    expect(result.error?.issues[0]?.message).toBe(`currency ${code} is not supported`);
  });

  it.each([null, undefined, 826, ['GBP'], { code: 'GBP' }])('rejects non-string %j', (value) => {
    expect(currencyCodeSchema.safeParse(value).success).toBe(false);
  });

  it('property: accepts a string exactly when it is supported', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 4 }), fc.stringMatching(/^[A-Z]{3}$/)), (code) => {
        expect(currencyCodeSchema.safeParse(code).success).toBe(isSupportedCurrency(code));
      }),
    );
  });
});
