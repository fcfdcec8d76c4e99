import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { SUPPORTED_CURRENCIES, UnknownCurrencyError, currencyExponent } from '../../../src/platform/money/currency.ts';
import { MAX_EXACT_MINOR_UNITS, TooManyDecimalsError, formatMinorUnits, fromMajorUnits, parseMajorUnits, toMajorUnits } from '../../../src/platform/money/major-units.ts';

// [minor units, currency, JSON text of the major-unit number, CSV decimal string]
const TABLE: ReadonlyArray<readonly [number, string, string, string]> = [
  // exponent 2
  [0, 'GBP', '0', '0.00'],
  [1, 'GBP', '0.01', '0.01'],
  [10, 'GBP', '0.1', '0.10'],
  [99, 'GBP', '0.99', '0.99'],
  [100, 'GBP', '1', '1.00'],
  [101, 'GBP', '1.01', '1.01'],
  [110, 'GBP', '1.1', '1.10'],
  [12550, 'GBP', '125.5', '125.50'],
  [12555, 'GBP', '125.55', '125.55'],
  [100000, 'GBP', '1000', '1000.00'],
  [1234567890123, 'GBP', '12345678901.23', '12345678901.23'],
  [999999999999999, 'GBP', '9999999999999.99', '9999999999999.99'],
  [-1, 'GBP', '-0.01', '-0.01'],
  [-10, 'GBP', '-0.1', '-0.10'],
  [-99, 'GBP', '-0.99', '-0.99'],
  [-100, 'GBP', '-1', '-1.00'],
  [-12550, 'GBP', '-125.5', '-125.50'],
  [-1234567890123, 'GBP', '-12345678901.23', '-12345678901.23'],
  [-999999999999999, 'GBP', '-9999999999999.99', '-9999999999999.99'],
  [7, 'EUR', '0.07', '0.07'],
  [3333, 'USD', '33.33', '33.33'],
  [5000, 'HUF', '50', '50.00'],
  // exponent 0
  [0, 'JPY', '0', '0'],
  [1, 'JPY', '1', '1'],
  [5, 'JPY', '5', '5'],
  [10, 'JPY', '10', '10'],
  [99, 'JPY', '99', '99'],
  [100, 'JPY', '100', '100'],
  [101, 'JPY', '101', '101'],
  [12550, 'JPY', '12550', '12550'],
  [1234567890123, 'JPY', '1234567890123', '1234567890123'],
  [999999999999999, 'JPY', '999999999999999', '999999999999999'],
  [-5, 'JPY', '-5', '-5'],
  [-12550, 'ISK', '-12550', '-12550'],
  [42, 'KRW', '42', '42'],
  // exponent 3
  [0, 'BHD', '0', '0.000'],
  [1, 'BHD', '0.001', '0.001'],
  [10, 'BHD', '0.01', '0.010'],
  [99, 'BHD', '0.099', '0.099'],
  [100, 'BHD', '0.1', '0.100'],
  [101, 'BHD', '0.101', '0.101'],
  [1000, 'BHD', '1', '1.000'],
  [1234, 'BHD', '1.234', '1.234'],
  [12550, 'BHD', '12.55', '12.550'],
  [1234567890123, 'BHD', '1234567890.123', '1234567890.123'],
  [-1, 'BHD', '-0.001', '-0.001'],
  [-1234, 'KWD', '-1.234', '-1.234'],
  [500, 'JOD', '0.5', '0.500'],
  [1001, 'OMR', '1.001', '1.001'],
  [20, 'TND', '0.02', '0.020'],
  // exponent 4
  [0, 'CLF', '0', '0.0000'],
  [1, 'CLF', '0.0001', '0.0001'],
  [10, 'CLF', '0.001', '0.0010'],
  [99, 'CLF', '0.0099', '0.0099'],
  [100, 'CLF', '0.01', '0.0100'],
  [101, 'CLF', '0.0101', '0.0101'],
  [10000, 'CLF', '1', '1.0000'],
  [12550, 'CLF', '1.255', '1.2550'],
  [1234567890123, 'CLF', '123456789.0123', '123456789.0123'],
  [999999999999999, 'CLF', '99999999999.9999', '99999999999.9999'],
  [-1, 'CLF', '-0.0001', '-0.0001'],
];

const anyCurrency = fc.constantFrom(...SUPPORTED_CURRENCIES);
const exactMinor = fc.integer({ min: -MAX_EXACT_MINOR_UNITS, max: MAX_EXACT_MINOR_UNITS });
const anySafeInteger = fc.maxSafeInteger();

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('toMajorUnits', () => {
  it.each(TABLE)('%i %s -> %s', (minor, currency, json) => {
    const major = toMajorUnits(minor, currency);
    expect(major).toBe(Number(json));
    expect(JSON.stringify(major)).toBe(json);
    expect(JSON.stringify({ amount: major })).toBe(`{"amount":${json}}`);
  });

  it('never returns negative zero', () => {
    expect(Object.is(toMajorUnits(-0, 'GBP'), 0)).toBe(true);
    expect(Object.is(toMajorUnits(0, 'JPY'), 0)).toBe(true);
  });

  it.each([0.5, -1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 53, -(2 ** 53), 1e21])('throws RangeError for non-safe-integer %d', (minor) => {
    expect(() => toMajorUnits(minor, 'GBP')).toThrow(RangeError);
  });

  it.each([MAX_EXACT_MINOR_UNITS + 1, -(MAX_EXACT_MINOR_UNITS + 1), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER])(
    'throws RangeError for %d, beyond 15 digits where a JSON number may not be exact',
    (minor) => {
      expect(() => toMajorUnits(minor, 'GBP')).toThrow(RangeError);
      expect(() => toMajorUnits(minor, 'JPY')).toThrow(RangeError);
    },
  );

  it('throws UnknownCurrencyError for an unknown currency', () => {
    expect(() => toMajorUnits(100, 'XXX')).toThrow(UnknownCurrencyError);
    expect(() => toMajorUnits(100, 'gbp')).toThrow(UnknownCurrencyError);
  });

  it('property: equals the correctly rounded quotient m / 10^e (an independent oracle)', () => {
    // IEEE division of two exact operands is correctly rounded, as is parsing a decimal string, so both
    // land on the same double; the module avoids division only so no one copies float maths onto money.
    fc.assert(
      fc.property(exactMinor, anyCurrency, (minor, currency) => {
        expect(toMajorUnits(minor, currency)).toBe(minor / 10 ** currencyExponent(currency));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: JSON prints exactly the intended decimal', () => {
    fc.assert(
      fc.property(exactMinor, anyCurrency, (minor, currency) => {
        const fixed = formatMinorUnits(minor, currency);
        const intended = fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
        expect(JSON.stringify(toMajorUnits(minor, currency))).toBe(intended);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: strictly order-preserving', () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_EXACT_MINOR_UNITS, max: MAX_EXACT_MINOR_UNITS - 1 }), anyCurrency, (minor, currency) => {
        expect(toMajorUnits(minor, currency)).toBeLessThan(toMajorUnits(minor + 1, currency));
      }),
    );
  });

  it('property: every safe integer beyond 15 digits is refused, never silently rounded', () => {
    fc.assert(
      fc.property(anySafeInteger, anyCurrency, (minor, currency) => {
        if (Math.abs(minor) > MAX_EXACT_MINOR_UNITS) {
          expect(() => toMajorUnits(minor, currency)).toThrow(RangeError);
        } else {
          expect(fromMajorUnits(toMajorUnits(minor, currency), currency)).toBe(minor);
        }
      }),
    );
  });
});

describe('fromMajorUnits', () => {
  it.each(TABLE)('%i %s <- %s', (minor, currency, json) => {
    expect(fromMajorUnits(JSON.parse(json) as number, currency)).toBe(minor);
    expect(fromMajorUnits(Number(json), currency)).toBe(minor);
  });

  it('is exported as parseMajorUnits too', () => {
    expect(parseMajorUnits).toBe(fromMajorUnits);
  });

  it.each([
    [125.5, 'GBP', 12550],
    [125.5, 'GBP', 12550],
    [125, 'GBP', 12500],
    [0.1, 'GBP', 10],
    [-0, 'GBP', 0],
    [1e-2, 'GBP', 1],
    [1e3, 'JPY', 1000],
    [1.5, 'CLF', 15000],
    [0.001, 'KWD', 1],
    [9999999999999.99, 'GBP', 999999999999999],
    [-9999999999999.99, 'GBP', -999999999999999],
    [99999999999.9999, 'CLF', 999999999999999],
  ])('%d %s -> %i', (major, currency, minor) => {
    const result = fromMajorUnits(major, currency);
    expect(result).toBe(minor);
    expect(Object.is(result, -0)).toBe(false);
  });

  it.each([
    [125.555, 'GBP', 2],
    [0.001, 'GBP', 2],
    [-0.001, 'GBP', 2],
    [0.1 + 0.2, 'GBP', 2], // 0.30000000000000004: float noise from a sender is refused, not rounded
    [1.1 * 3, 'EUR', 2],
    [0.5, 'JPY', 0],
    [-5.5, 'ISK', 0],
    [1.2345, 'BHD', 3],
    [0.00001, 'CLF', 4],
    [1e-7, 'GBP', 2],
    [1.5e-7, 'CLF', 4],
    [-1e-7, 'JPY', 0],
    [5e-324, 'GBP', 2],
  ])('%d %s has too many decimals (allowed %i)', (major, currency, exponent) => {
    const error = thrown(() => fromMajorUnits(major, currency));
    expect(error).toBeInstanceOf(TooManyDecimalsError);
    const typed = error as TooManyDecimalsError;
    expect(typed.name).toBe('TooManyDecimalsError');
    expect(typed.currency).toBe(currency);
    expect(typed.exponent).toBe(exponent);
    expect(typed.value).toBe(major);
    expect(typed.message).toContain(currency);
  });

  it('words the allowed decimal places for people', () => {
    expect(thrown(() => fromMajorUnits(125.555, 'GBP'))).toHaveProperty('message', '125.555 has more decimal places than GBP allows (at most 2 decimal places)');
    expect(thrown(() => fromMajorUnits(0.5, 'JPY'))).toHaveProperty('message', '0.5 has more decimal places than JPY allows (no decimal places)');
  });

  it.each([
    [Number.NaN, 'GBP'],
    [Number.POSITIVE_INFINITY, 'GBP'],
    [Number.NEGATIVE_INFINITY, 'JPY'],
    [1e21, 'GBP'],
    [-1e21, 'JPY'],
    [1.5e300, 'JPY'],
    [Number.MAX_VALUE, 'GBP'],
    [1e15, 'JPY'],
    [1e14, 'GBP'],
    [10000000000000.01, 'GBP'],
    [Number.MAX_SAFE_INTEGER, 'JPY'],
    [1e12, 'CLF'],
  ])('throws RangeError for %d %s', (major, currency) => {
    const error = thrown(() => fromMajorUnits(major, currency));
    expect(error).toBeInstanceOf(RangeError);
    expect(error).not.toBeInstanceOf(TooManyDecimalsError);
  });

  it.each(['125.5', null, undefined, 10n, {}])('throws RangeError for non-number %s that slipped past the types', (value) => {
    expect(() => fromMajorUnits(value as unknown as number, 'GBP')).toThrow(RangeError);
  });

  it('throws UnknownCurrencyError for an unknown currency', () => {
    expect(() => fromMajorUnits(1, 'XXX')).toThrow(UnknownCurrencyError);
  });

  it('property: fromMajorUnits(toMajorUnits(m, c), c) === m for |m| < 1e15 and every currency', () => {
    fc.assert(
      fc.property(exactMinor, anyCurrency, (minor, currency) => {
        expect(fromMajorUnits(toMajorUnits(minor, currency), currency)).toBe(minor);
      }),
      { numRuns: 5000 },
    );
  });

  it('property: the round trip survives JSON serialisation', () => {
    fc.assert(
      fc.property(exactMinor, anyCurrency, (minor, currency) => {
        const wire = JSON.stringify({ amount: toMajorUnits(minor, currency) });
        const { amount } = JSON.parse(wire) as { amount: number };
        expect(fromMajorUnits(amount, currency)).toBe(minor);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: one decimal place too many always throws TooManyDecimalsError', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(10 ** 13), max: 10 ** 13 }), fc.integer({ min: 1, max: 9 }), anyCurrency, (minor, extraDigit, currency) => {
        // At most 15 significant digits, so the written text is exactly what the double means.
        const exact = formatMinorUnits(minor, currency);
        const text = `${exact}${currencyExponent(currency) === 0 ? '.' : ''}${extraDigit}`;
        const error = thrown(() => fromMajorUnits(Number(text), currency));
        expect(error).toBeInstanceOf(TooManyDecimalsError);
        expect((error as TooManyDecimalsError).exponent).toBe(currencyExponent(currency));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: any double either converts exactly or is refused with a typed error', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double(),
          fc.double({ min: -1e6, max: 1e6 }),
          exactMinor.map((m) => m / 100),
        ),
        anyCurrency,
        (major, currency) => {
          let minor: number;
          try {
            minor = fromMajorUnits(major, currency);
          } catch (error) {
            expect(error instanceof TooManyDecimalsError || error instanceof RangeError).toBe(true);
            return;
          }
          expect(Number.isSafeInteger(minor)).toBe(true);
          // -0 is the one double with no minor-unit counterpart of its own: it reads as 0.
          expect(toMajorUnits(minor, currency)).toBe(Object.is(major, -0) ? 0 : major);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('formatMinorUnits', () => {
  it.each(TABLE)('%i %s -> "%s" in JSON, "%s" in CSV', (minor, currency, _json, csv) => {
    expect(formatMinorUnits(minor, currency)).toBe(csv);
  });

  it('formats negative zero as zero', () => {
    expect(formatMinorUnits(-0, 'GBP')).toBe('0.00');
  });

  it('formats safe integers beyond 15 digits exactly, since strings have no precision limit', () => {
    expect(formatMinorUnits(Number.MAX_SAFE_INTEGER, 'GBP')).toBe('90071992547409.91');
    expect(formatMinorUnits(Number.MIN_SAFE_INTEGER, 'CLF')).toBe('-900719925474.0991');
    expect(formatMinorUnits(Number.MAX_SAFE_INTEGER, 'JPY')).toBe('9007199254740991');
  });

  it.each([0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('throws RangeError for %d', (minor) => {
    expect(() => formatMinorUnits(minor, 'GBP')).toThrow(RangeError);
  });

  it('throws UnknownCurrencyError for an unknown currency', () => {
    expect(() => formatMinorUnits(1, 'ABC')).toThrow(UnknownCurrencyError);
  });

  it('property: has exactly the exponent as decimal places and its digits are the minor units', () => {
    fc.assert(
      fc.property(anySafeInteger, anyCurrency, (minor, currency) => {
        const text = formatMinorUnits(minor, currency);
        const exponent = currencyExponent(currency);
        expect(text).toMatch(exponent === 0 ? /^-?(0|[1-9]\d*)$/ : new RegExp(`^-?(0|[1-9]\\d*)\\.\\d{${exponent}}$`));
        expect(BigInt(text.replace('.', ''))).toBe(BigInt(minor));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: the CSV string parses back to the same minor units', () => {
    fc.assert(
      fc.property(exactMinor, anyCurrency, (minor, currency) => {
        expect(fromMajorUnits(Number(formatMinorUnits(minor, currency)), currency)).toBe(minor);
      }),
      { numRuns: 2000 },
    );
  });
  it('formats a bigint total exactly, past the safe-integer range and past bigint columns alike', () => {
    // 2^53 + 1: the smallest integer no number holds.
    expect(formatMinorUnits(9_007_199_254_740_993n, 'GBP')).toBe('90071992547409.93');
    expect(formatMinorUnits(10n * 999_999_999_999_999n + 1n, 'GBP')).toBe('99999999999999.91');
    expect(formatMinorUnits(-(2n ** 70n), 'JPY')).toBe('-1180591620717411303424');
    expect(formatMinorUnits(-5n, 'BHD')).toBe('-0.005');
    expect(formatMinorUnits(0n, 'GBP')).toBe('0.00');
  });

  it('property: a bigint formats as the same number of minor units does, and beyond it digit for digit', () => {
    fc.assert(
      fc.property(anySafeInteger, anyCurrency, (minor, currency) => {
        expect(formatMinorUnits(BigInt(minor), currency)).toBe(formatMinorUnits(minor, currency));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), anyCurrency, (minor, currency) => {
        expect(BigInt(formatMinorUnits(minor, currency).replace('.', ''))).toBe(minor);
      }),
      { numRuns: 2000 },
    );
  });
});
