import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { SUPPORTED_CURRENCIES, UnknownCurrencyError, currencyExponent } from '../../../src/platform/money/currency.ts';
import { MAX_EXACT_MINOR_UNITS, formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import { TypedAmountError, formatDecimalMoney, formatMoney, parseTypedAmount } from '../../../src/platform/money/money-text.ts';

/** Every exponent the service accepts, with the currencies that have it (0, 2, 3 and CLF's 4). */
const BY_EXPONENT = new Map<number, string[]>();
for (const currency of SUPPORTED_CURRENCIES) BY_EXPONENT.set(currencyExponent(currency), [...(BY_EXPONENT.get(currencyExponent(currency)) ?? []), currency]);

describe('formatMoney', () => {
  it.each([
    [3142, 'GBP', '£31.42'],
    [314200, 'GBP', '£3,142.00'],
    [70560, 'GBP', '£705.60'],
    [0, 'GBP', '£0.00'],
    [1, 'GBP', '£0.01'],
    [-1, 'GBP', '-£0.01'],
    [-12345678, 'GBP', '-£123,456.78'],
    [100, 'EUR', '€1.00'],
    [99999, 'USD', 'US$999.99'],
    [3142, 'CHF', '31.42 CHF'],
    [5000, 'HUF', '50.00 HUF'],
    [0, 'JPY', '0 JPY'],
    [1500, 'JPY', '1,500 JPY'],
    [999, 'JPY', '999 JPY'],
    [-1000, 'ISK', '-1,000 ISK'],
    [1234, 'BHD', '1.234 BHD'],
    [1, 'KWD', '0.001 KWD'],
    [1234567, 'JOD', '1,234.567 JOD'],
    [12345, 'CLF', '1.2345 CLF'],
    [999_999_999_999_999, 'GBP', '£9,999,999,999,999.99'],
    [9_007_199_254_740_993n, 'GBP', '£90,071,992,547,409.93'],
  ] as const)('%s %s reads %s', (minor, currency, text) => expect(formatMoney(minor, currency)).toBe(text));

  it('refuses a currency it does not know rather than guessing its decimals', () => {
    expect(() => formatMoney(100, 'XXX')).toThrow(UnknownCurrencyError);
  });

  it('refuses a fractional or unsafe number of minor units', () => {
    expect(() => formatMoney(1.5, 'GBP')).toThrow(RangeError);
    expect(() => formatMoney(Number.MAX_SAFE_INTEGER + 2, 'GBP')).toThrow(RangeError);
  });

  for (const [exponent, currencies] of BY_EXPONENT) {
    it(`property (exponent ${exponent}: ${currencies.join(' ')}): exactly ${exponent} decimal places, the currency named, the digits of the minor units`, () => {
      fc.assert(
        fc.property(fc.constantFrom(...currencies), fc.integer({ min: -MAX_EXACT_MINOR_UNITS, max: MAX_EXACT_MINOR_UNITS }), (currency, minor) => {
          const text = formatMoney(minor, currency);
          const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
          expect(fraction.length).toBe(exponent);
          expect(text.includes(currency) || /^-?(£|€|US\$)/.test(text)).toBe(true);
          // Without its sign, symbol, code and separators it is the CSV decimal of the same amount.
          const bare = text.replace(/[£€]|US\$|,| [A-Z]{3}$/g, '');
          expect(bare).toBe(formatMinorUnits(minor, currency));
        }),
      );
    });
  }
});

describe('parseTypedAmount', () => {
  it.each([
    ['31.42', 'GBP', 3142],
    ['31.4', 'GBP', 3140],
    ['31', 'GBP', 3100],
    [' 007.10 ', 'GBP', 710],
    ['0.01', 'GBP', 1],
    ['9999999999999.99', 'GBP', 999_999_999_999_999],
    ['1500', 'JPY', 1500],
    ['999999999999999', 'JPY', 999_999_999_999_999],
    ['1.234', 'BHD', 1234],
    ['1.2', 'KWD', 1200],
    ['12', 'OMR', 12000],
    ['1.2345', 'CLF', 12345],
  ] as const)('reads %j %s as %i minor units', (text, currency, minor) => expect(parseTypedAmount(text, currency)).toBe(minor));

  it.each([
    ['31.425', 'GBP', '31.425 has more decimal places than GBP allows (at most 2 decimal places)'],
    ['31.420', 'GBP', '31.420 has more decimal places than GBP allows (at most 2 decimal places)'],
    ['1.5', 'JPY', '1.5 has more decimal places than JPY allows (no decimal places)'],
    ['1.0', 'JPY', '1.0 has more decimal places than JPY allows (no decimal places)'],
    ['1.2345', 'BHD', '1.2345 has more decimal places than BHD allows (at most 3 decimal places)'],
    ['0', 'GBP', 'an amount must be more than zero'],
    ['0.00', 'GBP', 'an amount must be more than zero'],
    ['-5', 'GBP', '"-5" is not an amount in GBP: write it like 1250.50, without a sign, currency symbol or separators'],
    ['£5', 'GBP', '"£5" is not an amount in GBP: write it like 1250.50, without a sign, currency symbol or separators'],
    ['1,000', 'JPY', '"1,000" is not an amount in JPY: write it like 1250, without a sign, currency symbol or separators'],
    ['1e3', 'BHD', '"1e3" is not an amount in BHD: write it like 1250.500, without a sign, currency symbol or separators'],
    ['.5', 'GBP', '".5" is not an amount in GBP: write it like 1250.50, without a sign, currency symbol or separators'],
    ['5.', 'GBP', '"5." is not an amount in GBP: write it like 1250.50, without a sign, currency symbol or separators'],
    ['', 'GBP', '"" is not an amount in GBP: write it like 1250.50, without a sign, currency symbol or separators'],
    ['10000000000000.00', 'GBP', '10000000000000.00 GBP is more than £9,999,999,999,999.99, the largest amount the service carries'],
    ['1000000000000000', 'JPY', '1000000000000000 JPY is more than 999,999,999,999,999 JPY, the largest amount the service carries'],
  ] as const)('refuses %j %s: %s', (text, currency, message) => {
    expect(() => parseTypedAmount(text, currency)).toThrow(new TypedAmountError(message));
  });

  it('refuses a currency it does not know', () => {
    expect(() => parseTypedAmount('1.00', 'XXX')).toThrow(UnknownCurrencyError);
  });

  for (const [exponent, currencies] of BY_EXPONENT) {
    it(`property (exponent ${exponent}): reads back every amount it is shown as, and nothing finer`, () => {
      fc.assert(
        fc.property(fc.constantFrom(...currencies), fc.integer({ min: 1, max: MAX_EXACT_MINOR_UNITS }), (currency, minor) => {
          expect(parseTypedAmount(formatMinorUnits(minor, currency), currency)).toBe(minor);
          expect(() => parseTypedAmount(`${formatMinorUnits(minor, currency)}${exponent === 0 ? '.' : ''}1`, currency)).toThrow(TypedAmountError);
        }),
      );
    });
  }
});

describe('formatDecimalMoney', () => {
  it.each([
    ['125.50', 'GBP', '£125.50'],
    ['-0.01', 'GBP', '-£0.01'],
    ['0.00', 'GBP', '£0.00'],
    ['1500', 'JPY', '1,500 JPY'],
    ['1234.567', 'BHD', '1,234.567 BHD'],
  ] as const)('%s %s reads %s', (decimal, currency, text) => expect(formatDecimalMoney(decimal, currency)).toBe(text));

  it.each([
    ['125.5', 'GBP'],
    ['125', 'GBP'],
    ['1.5', 'JPY'],
    ['1e3', 'GBP'],
  ] as const)('refuses %s %s, which is not how the service writes the currency', (decimal, currency) => {
    expect(() => formatDecimalMoney(decimal, currency)).toThrow(RangeError);
  });

  for (const [, currencies] of BY_EXPONENT) {
    it(`property (${currencies[0]}): is formatMoney of the amount formatMinorUnits wrote`, () => {
      fc.assert(
        fc.property(fc.constantFrom(...currencies), fc.integer({ min: -MAX_EXACT_MINOR_UNITS, max: MAX_EXACT_MINOR_UNITS }), (currency, minor) => {
          expect(formatDecimalMoney(formatMinorUnits(minor, currency), currency)).toBe(formatMoney(minor, currency));
        }),
      );
    });
  }
});
