import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { remittancePaymentReference } from '../../../src/cycle/instructions/payment-reference.ts';
import {
  matchCredits,
  normaliseReference,
  pairKey,
  type KnownReference,
  type MatchingOptions,
  type OpenRemittance,
  type ProposedMatch,
  type UnmatchedCredit,
} from '../../../src/settlement/cash/remittance-matching.ts';

const PAY_DATE = '2026-10-30';

/** A reference as the lock issues it now: SDR261030P00000012. */
const ref = (payrollNumber: number, payDate = PAY_DATE): string => remittancePaymentReference(payDate, payrollNumber);
/** A reference issued before references were fixed width (SDR261030P12): still in the data, still quoted by employers. */
const legacyRef = (payrollNumber: number): string => `SDR261030P${payrollNumber}`;

const payrollId = (payrollNumber: number): string => `payroll-${String(payrollNumber).padStart(3, '0')}`;

function remittance(payrollNumber: number, outstanding: number, overrides: Partial<OpenRemittance> = {}): OpenRemittance {
  return {
    payrollId: payrollId(payrollNumber),
    payDate: PAY_DATE,
    employerId: 'employer-a',
    currency: 'GBP',
    paymentReference: ref(payrollNumber),
    outstanding,
    ...overrides,
  };
}

const legacyRemittance = (payrollNumber: number, outstanding: number, overrides: Partial<OpenRemittance> = {}): OpenRemittance =>
  remittance(payrollNumber, outstanding, { paymentReference: legacyRef(payrollNumber), ...overrides });

/** A remittance already paid in full (or over): no longer open, its reference still names it. */
const closed = (payrollNumber: number, paymentReference = ref(payrollNumber)): KnownReference => ({
  payrollId: payrollId(payrollNumber),
  payDate: PAY_DATE,
  paymentReference,
});

function credit(id: string, amount: number, reference: string | null, overrides: Partial<UnmatchedCredit> = {}): UnmatchedCredit {
  return { id, amount, currency: 'GBP', reference, bookingDate: '2026-10-30', ...overrides };
}

const match = (creditId: string, payrollNumber: number, amount: number, rule: ProposedMatch['rule']): ProposedMatch => ({
  creditId,
  payrollId: payrollId(payrollNumber),
  payDate: PAY_DATE,
  amount,
  rule,
  flagged: rule === 'tolerance',
});

const NOTHING_REFUSED: ReadonlySet<string> = new Set();
const NO_TOLERANCE: MatchingOptions = { toleranceMinor: 0, refusedPairs: NOTHING_REFUSED };
const tolerance = (toleranceMinor: number): MatchingOptions => ({ toleranceMinor, refusedPairs: NOTHING_REFUSED });
const refusing = (pairs: ReadonlyArray<[creditId: string, payrollNumber: number]>, toleranceMinor = 0): MatchingOptions => ({
  toleranceMinor,
  refusedPairs: new Set(pairs.map(([creditId, payrollNumber]) => pairKey(creditId, payrollId(payrollNumber), PAY_DATE))),
});
const NONE_CLOSED: readonly KnownReference[] = [];

describe('normaliseReference', () => {
  it.each([
    ['SDR261030P00000012', 'SDR261030P00000012'],
    ['SDR261030P12', 'SDR261030P12'],
    ['sdr261030p12', 'SDR261030P12'],
    [' SDR 261030 P12 ', 'SDR261030P12'],
    ['SDR-261030/P12.', 'SDR261030P12'],
    ['Payroll: Oct & Nov (SDR261030P12)', 'PAYROLLOCTNOVSDR261030P12'],
    ['£€ßé_*', 'SS'],
    ['', ''],
    ['   ', ''],
  ])('%j -> %j', (text, normalised) => {
    expect(normaliseReference(text)).toBe(normalised);
  });

  it('property: leaves every payment reference we issue unchanged', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }), fc.integer({ min: 1, max: 99_999_999 }), (day, number) => {
        const reference = remittancePaymentReference(day.toISOString().slice(0, 10), number);
        expect(normaliseReference(reference)).toBe(reference);
      }),
    );
  });

  it('property: the result is upper-case letters and digits, and normalising twice changes nothing', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 40 }), (text) => {
        const normalised = normaliseReference(text);
        expect(normalised).toMatch(/^[A-Z0-9]*$/);
        expect(normaliseReference(normalised)).toBe(normalised);
      }),
    );
  });
});

describe('pairKey', () => {
  it('is the same for the same credit, payroll and pay date, and differs when any of them does', () => {
    expect(pairKey('c1', 'payroll-012', '2026-10-30')).toBe(pairKey('c1', 'payroll-012', '2026-10-30'));
    expect(pairKey('c1', 'payroll-012', '2026-10-30')).not.toBe(pairKey('c2', 'payroll-012', '2026-10-30'));
    expect(pairKey('c1', 'payroll-012', '2026-10-30')).not.toBe(pairKey('c1', 'payroll-013', '2026-10-30'));
    expect(pairKey('c1', 'payroll-012', '2026-10-30')).not.toBe(pairKey('c1', 'payroll-012', '2026-11-27'));
    // However the parts are cut, a separator inside one never makes it another pair's key.
    expect(pairKey('a/b', 'c', 'd')).not.toBe(pairKey('a', 'b/c', 'd'));
    expect(pairKey('a|b', 'c', 'd')).not.toBe(pairKey('a', 'b|c', 'd'));
    expect(pairKey('a","b', 'c', 'd')).not.toBe(pairKey('a', 'b","c', 'd'));
  });

  it('property: two different pairs never share a key, whatever characters the ids hold', () => {
    const part = fc.string({ maxLength: 6, unit: fc.constantFrom('a', '/', '|', '"', '\\', '\u0000', ',', '[') });
    fc.assert(
      fc.property(fc.tuple(part, part, part), fc.tuple(part, part, part), (a, b) => {
        fc.pre(a.join('\u0001') !== b.join('\u0001'));
        expect(pairKey(...a)).not.toBe(pairKey(...b));
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('matchCredits, rule by rule', () => {
  it('exact: the reference as issued (trimmed) and the amount outstanding', () => {
    expect(matchCredits([credit('c1', 1250, `  ${ref(12)} `)], [remittance(12, 1250)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 1250, 'exact')]);
  });

  it('exact: a reference issued before references were fixed width still matches as it was issued', () => {
    expect(matchCredits([credit('c1', 1250, 'SDR261030P12')], [legacyRemittance(12, 1250)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 1250, 'exact')]);
  });

  it('exact needs the amount too: a different amount is not matched without tolerance', () => {
    expect(matchCredits([credit('c1', 1249, ref(12))], [remittance(12, 1250)], NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
  });

  it('a credit in another currency never pays a remittance', () => {
    expect(matchCredits([credit('c1', 1250, ref(12), { currency: 'EUR' })], [remittance(12, 1250)], NONE_CLOSED, tolerance(100))).toEqual([]);
  });

  it('a credit without a reference, or with one that names nothing, is left alone', () => {
    const remittances = [remittance(12, 1250)];
    expect(matchCredits([credit('c1', 1250, null), credit('c2', 1250, ''), credit('c3', 1250, 'OCTOBER PAYROLL')], remittances, NONE_CLOSED, tolerance(100))).toEqual([]);
  });

  it.each([
    ['lower case, spaces and dashes', 'sdr 261030-p00000012'],
    ['inside other words', 'ACME LTD SDR261030P00000012 OCT'],
    ['between brackets and punctuation', 'Payroll Oct.(SDR261030P00000012);thanks'],
    ['with slashes', 'SDR/261030/P00000012'],
    ['twice', 'SDR261030P00000012 SDR261030P00000012'],
  ])('normalised: %s', (_, reference) => {
    expect(matchCredits([credit('c1', 1250, reference)], [remittance(12, 1250)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 1250, 'normalised')]);
  });

  it.each([
    ['lower case, spaces and dashes', 'sdr 261030-p12'],
    ['inside other words', 'ACME LTD SDR261030P12 OCT'],
    ['with slashes', 'SDR/261030/P12'],
  ])('normalised, a reference issued before fixed width: %s', (_, reference) => {
    expect(matchCredits([credit('c1', 1250, reference)], [legacyRemittance(12, 1250)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 1250, 'normalised')]);
  });

  it('normalised: a reference the bank cut short still names the remittance with 12 or more characters left', () => {
    const long = remittance(12_345_678, 900);
    expect(long.paymentReference).toBe('SDR261030P12345678');
    expect(matchCredits([credit('c1', 900, 'SDR261030P12')], [long], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12_345_678, 900, 'normalised')]);
    expect(matchCredits([credit('c1', 900, 'ACME SDR261030P1234')], [long], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12_345_678, 900, 'normalised')]);
    expect(matchCredits([credit('c1', 900, 'ACME SDR261030P1234.')], [long], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12_345_678, 900, 'normalised')]);
  });

  it('normalised: a zero-padded reference cut short names the one remittance it can be the start of', () => {
    // What a bank leaves of "ACME SDR261030P00000012" after 18 characters.
    const text = 'ACME SDR261030P000';
    expect(matchCredits([credit('c1', 900, text)], [remittance(12, 900)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 900, 'normalised')]);
    expect(matchCredits([credit('c1', 900, text)], [remittance(12, 900), remittance(13, 900)], NONE_CLOSED, tolerance(10))).toEqual([]);
  });

  it('a cut-off reference of fewer than 12 characters names nothing', () => {
    expect(matchCredits([credit('c1', 900, 'SDR261030P1')], [remittance(12_345_678, 900)], NONE_CLOSED, tolerance(10))).toEqual([]);
  });

  it('a cut-off reference only counts at the end of the text (the bank cuts the end)', () => {
    expect(matchCredits([credit('c1', 900, 'SDR261030P1234 OCT')], [remittance(12_345_678, 900)], NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
  });

  it('a cut-off reference two remittances start with names neither', () => {
    const remittances = [remittance(12_345_678, 900), remittance(12_345_679, 900)];
    expect(matchCredits([credit('c1', 900, 'SDR261030P1234567')], remittances, NONE_CLOSED, tolerance(10))).toEqual([]);
  });

  it('a whole reference outranks one it could be a cut-off of', () => {
    const remittances = [legacyRemittance(12, 500), legacyRemittance(123, 500)];
    expect(matchCredits([credit('c1', 500, 'sdr261030p12')], remittances, NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 500, 'normalised')]);
  });

  it('P12 does not also name P1: a reference ending in digits ends where the digits end', () => {
    const remittances = [legacyRemittance(1, 700), legacyRemittance(12, 700)];
    expect(matchCredits([credit('c1', 700, 'PAY SDR261030P12')], remittances, NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 700, 'normalised')]);
    expect(matchCredits([credit('c1', 700, 'PAY SDR261030P1 OCT')], remittances, NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 1, 700, 'normalised')]);
  });

  it('digits the payer separated by a space could be either: naming both, it names neither', () => {
    const remittances = [legacyRemittance(1, 700), legacyRemittance(12, 700)];
    expect(matchCredits([credit('c1', 700, 'SDR261030P1 2')], remittances, NONE_CLOSED, tolerance(5))).toEqual([]);
  });

  it('two remittances with the same reference are named by neither (no guessing)', () => {
    const remittances = [remittance(12, 700), remittance(13, 700, { paymentReference: ref(12) })];
    expect(matchCredits([credit('c1', 700, ref(12))], remittances, NONE_CLOSED, tolerance(5))).toEqual([]);
  });

  it('many_to_one: one credit for two pay dates of one employer, for the sum of both', () => {
    const remittances = [remittance(12, 300), remittance(13, 450)];
    expect(matchCredits([credit('c1', 750, `${ref(12)} ${ref(13)}`)], remittances, NONE_CLOSED, NO_TOLERANCE)).toEqual([
      match('c1', 12, 300, 'many_to_one'),
      match('c1', 13, 450, 'many_to_one'),
    ]);
    expect(matchCredits([credit('c1', 750, `${ref(13)}/${ref(12)}`)], remittances, NONE_CLOSED, NO_TOLERANCE)).toHaveLength(2);
  });

  it('many_to_one, references of both formats in one credit', () => {
    const remittances = [legacyRemittance(12, 300), remittance(13, 450)];
    expect(matchCredits([credit('c1', 750, `SDR261030P12, ${ref(13)}`)], remittances, NONE_CLOSED, NO_TOLERANCE)).toEqual([
      match('c1', 12, 300, 'many_to_one'),
      match('c1', 13, 450, 'many_to_one'),
    ]);
  });

  it('many_to_one needs the exact sum, one employer, one currency, and every named remittance open', () => {
    const reference = `${ref(12)} ${ref(13)}`;
    expect(matchCredits([credit('c1', 751, reference)], [remittance(12, 300), remittance(13, 450)], NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
    expect(matchCredits([credit('c1', 750, reference)], [remittance(12, 300), remittance(13, 450, { employerId: 'employer-b' })], NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
    expect(matchCredits([credit('c1', 750, reference)], [remittance(12, 300), remittance(13, 450, { currency: 'EUR' })], NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
    // c0 pays P13 exactly first; c1 names P13 too, so it is not a clean many_to_one any more.
    expect(matchCredits([credit('c0', 450, ref(13)), credit('c1', 300, reference)], [remittance(12, 300), remittance(13, 450)], NONE_CLOSED, NO_TOLERANCE)).toEqual([
      match('c0', 13, 450, 'exact'),
    ]);
    // P13 was paid before this run (no longer open): the credit names it, so nothing of it matches,
    // not even the two open ones it names beside it for exactly what they are owed.
    expect(matchCredits([credit('c1', 300, reference)], [remittance(12, 300)], [closed(13)], tolerance(500))).toEqual([]);
    expect(matchCredits([credit('c1', 750, `${reference} ${ref(14)}`)], [remittance(12, 300), remittance(14, 450)], [closed(13)], NO_TOLERANCE)).toEqual([]);
  });

  it('many_to_one does not pick a subset of the named remittances', () => {
    const remittances = [remittance(12, 300), remittance(13, 450), remittance(14, 50)];
    expect(matchCredits([credit('c1', 750, `${ref(12)} ${ref(13)} ${ref(14)}`)], remittances, NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
  });

  it('one_to_many: two credits for one remittance that add up to it', () => {
    const credits = [credit('c2', 400, ref(12), { bookingDate: '2026-10-31' }), credit('c1', 600, 'sdr 261030 p00000012')];
    expect(matchCredits(credits, [remittance(12, 1000)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 600, 'one_to_many'), match('c2', 12, 400, 'one_to_many')]);
  });

  it('one_to_many takes the earliest credits that add up exactly, and leaves the later ones', () => {
    const credits = [
      credit('c1', 600, ref(12), { bookingDate: '2026-10-29' }),
      credit('c2', 400, ref(12), { bookingDate: '2026-10-30' }),
      credit('c3', 400, ref(12), { bookingDate: '2026-10-31' }),
    ];
    expect(matchCredits(credits, [remittance(12, 1000)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 600, 'one_to_many'), match('c2', 12, 400, 'one_to_many')]);
  });

  it('one_to_many only tries the leading credits in booking order (no subset search)', () => {
    const credits = [
      credit('c1', 500, ref(12), { bookingDate: '2026-10-29' }),
      credit('c2', 300, ref(12), { bookingDate: '2026-10-30' }),
      credit('c3', 200, ref(12), { bookingDate: '2026-10-31' }),
    ];
    // 500 + 200 would pay 700, but 500 + 300 is the leading pair and overshoots.
    expect(matchCredits(credits, [remittance(12, 700)], NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
  });

  it('one_to_many orders credits booked the same day by id', () => {
    const credits = [credit('c-b', 300, ref(12)), credit('c-a', 700, ref(12)), credit('c-c', 300, ref(12))];
    expect(matchCredits(credits, [remittance(12, 1000)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c-a', 12, 700, 'one_to_many'), match('c-b', 12, 300, 'one_to_many')]);
  });

  it('tolerance: a credit a little short matches whole, flagged', () => {
    expect(matchCredits([credit('c1', 995, ref(12))], [remittance(12, 1000)], NONE_CLOSED, tolerance(5))).toEqual([match('c1', 12, 995, 'tolerance')]);
  });

  it('tolerance: a credit a little over matches whole, flagged, so the credit is used up', () => {
    expect(matchCredits([credit('c1', 1005, `ACME ${ref(12)}`)], [remittance(12, 1000)], NONE_CLOSED, tolerance(5))).toEqual([match('c1', 12, 1005, 'tolerance')]);
  });

  it('tolerance: one minor unit beyond it is not matched', () => {
    expect(matchCredits([credit('c1', 994, ref(12)), credit('c2', 1006, ref(13))], [remittance(12, 1000), remittance(13, 1000)], NONE_CLOSED, tolerance(5))).toEqual([]);
  });

  it('credits competing for one remittance: the earliest booked wins, then the lowest id', () => {
    const remittances = [remittance(12, 1000)];
    const later = credit('c0', 1000, ref(12), { bookingDate: '2026-10-31' });
    expect(matchCredits([later, credit('c9', 1000, ref(12))], remittances, NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c9', 12, 1000, 'exact')]);
    expect(matchCredits([credit('c2', 1000, ref(12)), credit('c1', 1000, ref(12))], remittances, NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 1000, 'exact')]);
  });

  it('the rules apply in order: an exact match is taken before a later credit could pay it by tolerance', () => {
    const credits = [credit('c1', 998, ref(12), { bookingDate: '2026-10-29' }), credit('c2', 1000, 'sdr261030p00000012')];
    expect(matchCredits(credits, [remittance(12, 1000)], NONE_CLOSED, tolerance(5))).toEqual([match('c2', 12, 1000, 'normalised')]);
  });

  it('a remittance used by a many_to_one is not offered to a one_to_many', () => {
    const credits = [credit('c1', 750, `${ref(12)} ${ref(13)}`, { bookingDate: '2026-10-29' }), credit('c2', 200, ref(12)), credit('c3', 100, ref(12))];
    expect(matchCredits(credits, [remittance(12, 300), remittance(13, 450)], NONE_CLOSED, NO_TOLERANCE)).toEqual([
      match('c1', 12, 300, 'many_to_one'),
      match('c1', 13, 450, 'many_to_one'),
    ]);
  });

  it('refuses inputs it cannot order or trust', () => {
    expect(() => matchCredits([credit('c1', 1, 'X'), credit('c1', 2, 'Y')], [], NONE_CLOSED, NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([], [remittance(12, 1), remittance(12, 2)], NONE_CLOSED, NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([credit('c1', 0, 'X')], [], NONE_CLOSED, NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([credit('c1', 1.5, 'X')], [], NONE_CLOSED, NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([], [remittance(12, -1)], NONE_CLOSED, NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([], [], NONE_CLOSED, tolerance(-1))).toThrow(RangeError);
    expect(() => matchCredits([], [], NONE_CLOSED, tolerance(0.5))).toThrow(RangeError);
  });

  it('refuses a remittance given both as open and as no longer open (which would decide whether it may be paid)', () => {
    expect(() => matchCredits([], [remittance(12, 1)], [closed(12)], NO_TOLERANCE)).toThrow(/both as open and as no longer open/);
    expect(() => matchCredits([], [remittance(12, 1)], [closed(12, legacyRef(12))], NO_TOLERANCE)).toThrow(/both as open and as no longer open/);
    const otherPayDate: KnownReference = { payrollId: payrollId(12), payDate: '2026-11-27', paymentReference: ref(12, '2026-11-27') };
    expect(() => matchCredits([], [remittance(12, 1)], [otherPayDate], NO_TOLERANCE)).not.toThrow();
  });

  it('refuses to run without the known references or the refused pairs, rather than run without their protection', () => {
    const credits = [credit('c1', 1000, ref(12))];
    expect(() => matchCredits(credits, [remittance(12, 1000)], undefined as unknown as KnownReference[], NO_TOLERANCE)).toThrow(/knownReferences/);
    expect(() => matchCredits(credits, [remittance(12, 1000)], NONE_CLOSED, { toleranceMinor: 0 } as MatchingOptions)).toThrow(/refusedPairs/);
  });

  it('nothing in, nothing out', () => {
    expect(matchCredits([], [], NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
    expect(matchCredits([credit('c1', 1, ref(12))], [], NONE_CLOSED, NO_TOLERANCE)).toEqual([]);
    expect(matchCredits([credit('c1', 1, ref(12))], [], [closed(12)], tolerance(5))).toEqual([]);
    expect(matchCredits([], [remittance(12, 1)], [closed(13)], NO_TOLERANCE)).toEqual([]);
  });
});

describe("matchCredits, references are whole tokens of the payer's text", () => {
  it('the observed failure, open side: SDR261030P15 inside SDR261030P150 does not name P15', () => {
    const remittances = [legacyRemittance(15, 700)];
    for (const text of ['SDR261030P150', 'ACME SDR261030P150 OCT', 'sdr 261030 p150']) {
      expect(matchCredits([credit('c1', 700, text)], remittances, NONE_CLOSED, tolerance(5))).toEqual([]);
    }
  });

  it.each([
    ['a digit after a zero-padded reference', `${ref(12)}0`],
    ['a letter after it', `${ref(12)}X`],
    ['a word run into it after', `${ref(12)}OCT`],
    ['a letter before it', `X${ref(12)}`],
    ['a digit before it', `9${ref(12)}`],
    ['other words run into it, separators stripped by the bank', `ACMELTD${ref(12)}OCT`],
    ['two references run together', `${ref(12)}${ref(13)}`],
  ])('a reference with %s is no token the payer wrote: left for a person', (_, text) => {
    expect(matchCredits([credit('c1', 700, text)], [remittance(12, 700), remittance(13, 700)], NONE_CLOSED, tolerance(5))).toEqual([]);
    expect(matchCredits([credit('c1', 1400, text)], [remittance(12, 700), remittance(13, 700)], NONE_CLOSED, tolerance(5))).toEqual([]);
  });

  it.each([
    ['a legacy reference followed by a letter', 'SDR261030P15X'],
    ['preceded by a letter', 'XSDR261030P15'],
    ['run into other words', 'ACMELTDSDR261030P15OCT'],
  ])('the same for %s', (_, text) => {
    expect(matchCredits([credit('c1', 700, text)], [legacyRemittance(15, 700)], NONE_CLOSED, tolerance(5))).toEqual([]);
  });

  it('any character that is not a letter or digit separates: punctuation, brackets, line breaks', () => {
    for (const text of [`(${ref(12)})`, `REF:${ref(12)};`, `OCT\n${ref(12)}\tTHANKS`, `#${ref(12)}#`]) {
      expect(matchCredits([credit('c1', 700, text)], [remittance(12, 700)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 700, 'normalised')]);
    }
  });

  it('a cut-off reference must start a token too', () => {
    const long = remittance(12_345_678, 900);
    expect(matchCredits([credit('c1', 900, 'ACMESDR261030P1234')], [long], NONE_CLOSED, tolerance(5))).toEqual([]);
    expect(matchCredits([credit('c1', 900, '7SDR261030P1234')], [long], NONE_CLOSED, tolerance(5))).toEqual([]);
    expect(matchCredits([credit('c1', 900, 'ACME-SDR261030P1234')], [long], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12_345_678, 900, 'normalised')]);
  });

  it('old and zero-padded references of one pay date never name each other', () => {
    // Payroll 15 was locked before fixed width (P15); payroll 15,000,000's number needs no padding.
    const remittances = [legacyRemittance(15, 700), remittance(15_000_000, 900)];
    expect(remittances[1]!.paymentReference).toBe('SDR261030P15000000');
    expect(matchCredits([credit('c1', 700, 'SDR261030P15')], remittances, NONE_CLOSED, tolerance(5))).toEqual([match('c1', 15, 700, 'exact')]);
    expect(matchCredits([credit('c1', 900, 'SDR261030P15000000')], remittances, NONE_CLOSED, tolerance(5))).toEqual([match('c1', 15_000_000, 900, 'exact')]);
    // P15 paid for P15000000's amount: it names P15, whole, and is not P15000000 cut short.
    expect(matchCredits([credit('c1', 900, 'SDR261030P15')], remittances, NONE_CLOSED, tolerance(5))).toEqual([]);
  });
});

describe('matchCredits, references of remittances no longer open', () => {
  it('the observed failure: a duplicate payment quoting a paid P15 is not taken for P150 cut short', () => {
    const open = [legacyRemittance(150, 700, { employerId: 'employer-b' })];
    for (const text of ['SDR261030P15', ' sdr 261030 p15 ', 'ACME SDR261030P15', 'SDR-261030-P15.']) {
      expect(matchCredits([credit('dup', 700, text)], open, [closed(15, legacyRef(15))], tolerance(5))).toEqual([]);
    }
    // Without knowing P15, those 12 characters can only be P150 cut short (which is why the caller must say).
    expect(matchCredits([credit('dup', 700, 'SDR261030P15')], open, NONE_CLOSED, NO_TOLERANCE)).toEqual([match('dup', 150, 700, 'normalised')]);
  });

  it('a credit naming a closed remittance is matched by no rule, whatever its amount', () => {
    const open = [remittance(13, 700), legacyRemittance(150, 700)];
    const known = [closed(12), closed(15, legacyRef(15))];
    for (const reference of [ref(12), `ACME ${ref(12)}`, 'SDR261030P15']) {
      expect(matchCredits([credit('c1', 700, reference)], open, known, tolerance(50))).toEqual([]);
      expect(matchCredits([credit('c1', 350, reference), credit('c2', 350, reference)], open, known, tolerance(50))).toEqual([]);
    }
  });

  it('a credit naming a closed remittance and an open one pays neither', () => {
    expect(matchCredits([credit('c1', 700, `${ref(12)} ${ref(13)}`)], [remittance(13, 700)], [closed(12)], tolerance(5))).toEqual([]);
  });

  it("a cut-off reference that could be a closed remittance's or an open one's names neither", () => {
    const text = 'ACME SDR261030P1234567';
    expect(matchCredits([credit('c1', 900, text)], [remittance(12_345_678, 900)], [closed(12_345_679)], tolerance(5))).toEqual([]);
    expect(matchCredits([credit('c1', 900, text)], [remittance(12_345_678, 900)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12_345_678, 900, 'normalised')]);
    // Zero-padded: what is left of P00000012 after a bank's 18 characters could be P00000013, paid already.
    expect(matchCredits([credit('c1', 900, 'ACME SDR261030P000')], [remittance(12, 900)], [closed(13)], tolerance(5))).toEqual([]);
  });

  it('closed remittances take nothing from the open ones their credits do not name', () => {
    const open = [remittance(12, 700), legacyRemittance(150, 900)];
    const known = [closed(13), closed(15, legacyRef(15)), closed(1, legacyRef(1))];
    const credits = [credit('c1', 700, ref(12)), credit('c2', 900, 'PAYROLL SDR261030P150')];
    expect(matchCredits(credits, open, known, NO_TOLERANCE)).toEqual([match('c1', 12, 700, 'exact'), match('c2', 150, 900, 'normalised')]);
  });

  it('a closed remittance given twice names the same one remittance', () => {
    expect(matchCredits([credit('c1', 700, ref(12))], [remittance(13, 700)], [closed(12), closed(12)], tolerance(5))).toEqual([]);
    expect(matchCredits([credit('c1', 700, ref(13))], [remittance(13, 700)], [closed(12), closed(12)], tolerance(5))).toEqual([match('c1', 13, 700, 'exact')]);
  });

  it("exact: a reference that is also a closed remittance's (data from before unique references) pays neither", () => {
    expect(matchCredits([credit('c1', 700, ref(12))], [remittance(13, 700, { paymentReference: ref(12) })], [closed(12)], tolerance(5))).toEqual([]);
  });

  it('a remittance closed on another pay date of the same payroll does not stand in for this one', () => {
    const otherDay: KnownReference = { payrollId: payrollId(12), payDate: '2026-11-27', paymentReference: ref(12, '2026-11-27') };
    expect(matchCredits([credit('c1', 700, ref(12))], [remittance(12, 700)], [otherDay], NO_TOLERANCE)).toEqual([match('c1', 12, 700, 'exact')]);
  });
});

describe('matchCredits, pairs a person unmatched', () => {
  it('a refused pair is proposed by no rule', () => {
    const remittances = [remittance(12, 1000)];
    expect(matchCredits([credit('c1', 1000, ref(12))], remittances, NONE_CLOSED, refusing([['c1', 12]]))).toEqual([]);
    expect(matchCredits([credit('c1', 1000, `ACME ${ref(12)}`)], remittances, NONE_CLOSED, refusing([['c1', 12]]))).toEqual([]);
    expect(matchCredits([credit('c1', 998, ref(12))], remittances, NONE_CLOSED, refusing([['c1', 12]], 5))).toEqual([]);
    const halves = [credit('c1', 500, ref(12)), credit('c2', 500, ref(12))];
    expect(matchCredits(halves, remittances, NONE_CLOSED, refusing([['c2', 12]]))).toEqual([]);
    expect(matchCredits([credit('c1', 750, `${ref(12)} ${ref(13)}`)], [remittance(12, 300), remittance(13, 450)], NONE_CLOSED, refusing([['c1', 13]]))).toEqual([]);
  });

  it('another credit may still pay the remittance', () => {
    const credits = [credit('c1', 1000, ref(12), { bookingDate: '2026-10-29' }), credit('c2', 1000, ref(12))];
    expect(matchCredits(credits, [remittance(12, 1000)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 1000, 'exact')]);
    expect(matchCredits(credits, [remittance(12, 1000)], NONE_CLOSED, refusing([['c1', 12]]))).toEqual([match('c2', 12, 1000, 'exact')]);
  });

  it('one_to_many runs over the credits left once the refused one is out', () => {
    const credits = [
      credit('c1', 400, ref(12), { bookingDate: '2026-10-29' }),
      credit('c2', 400, ref(12), { bookingDate: '2026-10-30' }),
      credit('c3', 400, ref(12), { bookingDate: '2026-10-31' }),
    ];
    expect(matchCredits(credits, [remittance(12, 800)], NONE_CLOSED, NO_TOLERANCE)).toEqual([match('c1', 12, 400, 'one_to_many'), match('c2', 12, 400, 'one_to_many')]);
    expect(matchCredits(credits, [remittance(12, 800)], NONE_CLOSED, refusing([['c1', 12]]))).toEqual([
      match('c2', 12, 400, 'one_to_many'),
      match('c3', 12, 400, 'one_to_many'),
    ]);
  });

  it('the credit may still pay other remittances, and only the refused pay date of the payroll is refused', () => {
    const credits = [credit('c1', 1000, ref(12)), credit('c2', 2000, ref(13))];
    const remittances = [remittance(12, 1000), remittance(13, 2000)];
    expect(
      matchCredits(
        credits,
        remittances,
        NONE_CLOSED,
        refusing([
          ['c1', 13],
          ['c2', 12],
        ]),
      ),
    ).toEqual([match('c1', 12, 1000, 'exact'), match('c2', 13, 2000, 'exact')]);
    const otherPayDate: MatchingOptions = { toleranceMinor: 0, refusedPairs: new Set([pairKey('c1', payrollId(12), '2026-11-27')]) };
    expect(matchCredits(credits, remittances, NONE_CLOSED, otherPayDate)).toEqual([match('c1', 12, 1000, 'exact'), match('c2', 13, 2000, 'exact')]);
  });

  it('a refusal never sends the credit to a remittance it did not name on its own', () => {
    // Refused P12, the text is still P12 whole: not P123 cut short.
    const remittances = [legacyRemittance(12, 700), legacyRemittance(123, 700)];
    expect(matchCredits([credit('c1', 700, 'SDR261030P12')], remittances, NONE_CLOSED, refusing([['c1', 12]], 5))).toEqual([]);
    // Refused one of the two it names: not the other one alone, even for its amount.
    expect(matchCredits([credit('c1', 450, `${ref(12)} ${ref(13)}`)], [remittance(12, 300), remittance(13, 450)], NONE_CLOSED, refusing([['c1', 12]]))).toEqual([]);
  });
});

// A small world where references collide on purpose: on the same pay dates, references issued before
// fixed width (P1, P12, P15, P123, P150...) beside zero-padded ones (P00000001, P15000000...), some of
// the remittances already paid (no longer open), amounts small so sums coincide, credits quoting them
// in every way banks deliver them, and pairs a person unmatched.
const PAY_DATES = ['2026-10-30', '2026-11-27'];
const PAYROLL_NUMBERS = [1, 2, 12, 13, 15, 123, 150, 1234, 15_000_000, 12_345_678, 12_345_679];

interface WorldRemittance extends OpenRemittance {
  /** Paid already: given to matchCredits as a known reference, not as open. */
  closed: boolean;
}

const legacyReferenceOf = (payDate: string, number: number): string => `SDR${payDate.slice(2, 4)}${payDate.slice(5, 7)}${payDate.slice(8, 10)}P${number}`;

const remittancesArbitrary = fc
  .uniqueArray(
    fc.record({
      payDate: fc.constantFrom(...PAY_DATES),
      number: fc.constantFrom(...PAYROLL_NUMBERS),
      legacy: fc.boolean(),
      closed: fc.constantFrom(false, false, true),
      employerId: fc.constantFrom('employer-a', 'employer-b'),
      currency: fc.constantFrom('GBP', 'GBP', 'EUR'),
      outstanding: fc.integer({ min: 1, max: 40 }),
    }),
    { selector: (r) => `${r.number}|${r.payDate}`, minLength: 1, maxLength: 9 },
  )
  .map((rows) =>
    rows.map((row): WorldRemittance => ({
      payrollId: `payroll-${row.number}`,
      payDate: row.payDate,
      employerId: row.employerId,
      currency: row.currency,
      paymentReference: row.legacy ? legacyReferenceOf(row.payDate, row.number) : remittancePaymentReference(row.payDate, row.number),
      outstanding: row.outstanding,
      closed: row.closed,
    })),
  );

const openOf = (remittances: readonly WorldRemittance[]): OpenRemittance[] => remittances.filter((r) => !r.closed).map(({ closed: _, ...open }) => open);
const knownOf = (remittances: readonly WorldRemittance[]): KnownReference[] =>
  remittances.filter((r) => r.closed).map(({ payrollId, payDate, paymentReference }) => ({ payrollId, payDate, paymentReference }));

const mangle = (reference: string, how: number): string =>
  [
    reference,
    ` ${reference.toLowerCase()} `,
    reference.split('').join(how % 2 === 0 ? ' ' : ''),
    `${reference.slice(0, 3)}-${reference.slice(3, 9)}/${reference.slice(9)}`,
    `ACME LTD ${reference} OCT`,
    reference.slice(0, 12 + (how % 4)),
    `PAYROLL ${reference.slice(0, 13)}`,
    reference.slice(0, 10),
    `${reference}0`,
    `X${reference}`,
    `ACMELTD${reference}`,
    `ACME ${reference.slice(0, 13)}`,
  ][how % 12]!;

function referenceArbitrary(remittances: readonly OpenRemittance[]): fc.Arbitrary<string | null> {
  const pick = fc.constantFrom(...remittances.map((r) => r.paymentReference));
  return fc.oneof(
    fc.constant(null),
    fc.string({ unit: 'grapheme-ascii', maxLength: 20 }),
    fc.tuple(pick, fc.nat()).map(([reference, how]) => mangle(reference, how)),
    fc.tuple(pick, pick, fc.constantFrom('', ' ', ' / ')).map(([a, b, separator]) => `${a}${separator}${b}`),
    fc.tuple(pick, pick, pick).map((references) => references.join(' ')),
  );
}

interface CreditDraft {
  amount: number;
  currency: string;
  reference: string | null;
}

/** A credit aimed at one remittance (open or paid already): its reference as banks deliver it, its amount exact, near, or a part of it. */
function aimedCreditArbitrary(remittances: readonly OpenRemittance[]): fc.Arbitrary<CreditDraft> {
  return fc
    .record({ target: fc.constantFrom(...remittances), how: fc.nat(), amountKind: fc.nat({ max: 3 }), offset: fc.integer({ min: -7, max: 7 }), otherCurrency: fc.boolean() })
    .map(({ target, how, amountKind, offset, otherCurrency }) => ({
      reference: mangle(target.paymentReference, how),
      amount: Math.max(
        1,
        [target.outstanding, target.outstanding + offset, Math.ceil(target.outstanding / 2), target.outstanding - Math.ceil(target.outstanding / 2) || 1][amountKind]!,
      ),
      currency: otherCurrency && how % 5 === 0 ? (target.currency === 'GBP' ? 'EUR' : 'GBP') : target.currency,
    }));
}

/** A credit for several remittances at once, for the sum they are owed (or a little off it). */
function combinedCreditArbitrary(remittances: readonly OpenRemittance[]): fc.Arbitrary<CreditDraft> {
  return fc
    .record({
      targets: fc.subarray([...remittances], { minLength: 1, maxLength: Math.min(3, remittances.length) }),
      separator: fc.constantFrom('', ' ', ' / '),
      off: fc.constantFrom(0, 0, 1),
    })
    .map(({ targets, separator, off }) => ({
      reference: targets.map((r) => r.paymentReference).join(separator),
      amount: targets.reduce((sum, r) => sum + r.outstanding, 0) + off,
      currency: targets[0]!.currency,
    }));
}

function worldArbitrary() {
  return remittancesArbitrary.chain((all) =>
    fc.record({
      remittances: fc.constant(openOf(all)),
      knownReferences: fc.constant(knownOf(all)),
      credits: fc
        .array(
          fc.record({
            draft: fc.oneof(
              fc.record({ amount: fc.integer({ min: 1, max: 90 }), currency: fc.constantFrom('GBP', 'GBP', 'EUR'), reference: referenceArbitrary(all) }),
              aimedCreditArbitrary(all),
              aimedCreditArbitrary(all),
              combinedCreditArbitrary(all),
            ),
            bookingDate: fc.constantFrom('2026-10-29', '2026-10-30', '2026-10-31'),
            idSuffix: fc.integer({ min: 0, max: 99 }),
          }),
          { maxLength: 12 },
        )
        .map((rows) => rows.map(({ draft, bookingDate, idSuffix }, index): UnmatchedCredit => ({ id: `credit-${idSuffix}-${index}`, bookingDate, ...draft }))),
      toleranceMinor: fc.integer({ min: 0, max: 6 }),
      /** Which pairs a person unmatched: indexes into credits × every remittance, and into the matches an unrefused run proposes. */
      refusals: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 5 }),
      refuseProposed: fc.array(fc.nat(), { maxLength: 4 }),
      shuffleKeys: fc.array(fc.double({ noNaN: true }), { minLength: 40, maxLength: 40 }),
    }),
  );
}

type World = ReturnType<typeof worldArbitrary> extends fc.Arbitrary<infer W> ? W : never;

/** The pairs a person refused in this world: some at random, and some of those the rules would otherwise propose. */
function refusedPairsOf(world: World): Set<string> {
  const everyRemittance = [...world.remittances, ...world.knownReferences];
  const refused = new Set<string>();
  if (world.credits.length > 0) {
    for (const [c, r] of world.refusals) {
      const remittance = everyRemittance[r % everyRemittance.length]!;
      refused.add(pairKey(world.credits[c % world.credits.length]!.id, remittance.payrollId, remittance.payDate));
    }
  }
  const proposed = matchCredits(world.credits, world.remittances, world.knownReferences, { toleranceMinor: world.toleranceMinor, refusedPairs: NOTHING_REFUSED });
  if (proposed.length > 0) {
    for (const pick of world.refuseProposed) {
      const m = proposed[pick % proposed.length]!;
      refused.add(pairKey(m.creditId, m.payrollId, m.payDate));
    }
  }
  return refused;
}

const shuffled = <T>(items: readonly T[], keys: readonly number[]): T[] =>
  items
    .map((item, index) => ({ item, key: keys[index % keys.length]! + index * 1e-9 }))
    .sort((a, b) => a.key - b.key)
    .map(({ item }) => item);

// Independent of the code: what a payer's text names, read with regular expressions over the upper-cased
// text, where any character but A-Z and 0-9 separates, as docs/finance.md (Matching, in Cash) describes it.
const LETTER_OR_DIGIT = 'A-Z0-9';
const spelled = (characters: string): string => characters.split('').join(`[^${LETTER_OR_DIGIT}]*`);
const lettersAndDigits = (text: string): string => text.toUpperCase().replace(/[^A-Z0-9]/g, '');

/** The text holds the reference whole: from a token start to a token end, separators allowed inside. */
function namesWhole(reference: string | null, paymentReference: string): boolean {
  if (reference === null) return false;
  return new RegExp(`(?<![${LETTER_OR_DIGIT}])${spelled(lettersAndDigits(paymentReference))}(?![${LETTER_OR_DIGIT}])`).test(reference.toUpperCase());
}

/** The text ends (but for separators) with 12 or more of the reference's first characters, from a token start, short of all of them. */
function namesCutShort(reference: string | null, paymentReference: string): boolean {
  if (reference === null) return false;
  const characters = lettersAndDigits(paymentReference);
  for (let length = 12; length < characters.length; length++) {
    if (new RegExp(`(?<![${LETTER_OR_DIGIT}])${spelled(characters.slice(0, length))}[^${LETTER_OR_DIGIT}]*$`).test(reference.toUpperCase())) return true;
  }
  return false;
}

/** Every remittance, open or paid already, with the way the text names it. */
function namedBy(reference: string | null, world: Pick<World, 'remittances' | 'knownReferences'>) {
  const every = [...world.remittances, ...world.knownReferences];
  const whole = every.filter((r) => namesWhole(reference, r.paymentReference));
  const cutShort = every.filter((r) => namesCutShort(reference, r.paymentReference));
  return { whole, cutShort };
}

describe('matchCredits, properties', () => {
  it('never pays more than a credit holds, nor more than a remittance is owed except by a flagged tolerance; currencies agree', () => {
    fc.assert(
      fc.property(worldArbitrary(), (world) => {
        const { remittances, knownReferences, credits, toleranceMinor } = world;
        const refusedPairs = refusedPairsOf(world);
        const matches = matchCredits(credits, remittances, knownReferences, { toleranceMinor, refusedPairs });
        const creditById = new Map(credits.map((c) => [c.id, c]));
        const remittanceByKey = new Map(remittances.map((r) => [`${r.payrollId}|${r.payDate}`, r]));
        const paidFromCredit = new Map<string, number>();
        const paidToRemittance = new Map<string, ProposedMatch[]>();
        for (const m of matches) {
          const c = creditById.get(m.creditId)!;
          const r = remittanceByKey.get(`${m.payrollId}|${m.payDate}`)!;
          expect(c).toBeDefined();
          expect(r).toBeDefined();
          expect(c.currency).toBe(r.currency);
          expect(['exact', 'normalised', 'many_to_one', 'one_to_many', 'tolerance']).toContain(m.rule);
          expect(m.flagged).toBe(m.rule === 'tolerance');
          expect(m.amount).toBeGreaterThan(0);
          expect(Number.isSafeInteger(m.amount)).toBe(true);
          expect(refusedPairs.has(pairKey(m.creditId, m.payrollId, m.payDate))).toBe(false);
          paidFromCredit.set(c.id, (paidFromCredit.get(c.id) ?? 0) + m.amount);
          paidToRemittance.set(`${r.payrollId}|${r.payDate}`, [...(paidToRemittance.get(`${r.payrollId}|${r.payDate}`) ?? []), m]);
        }
        for (const [id, paid] of paidFromCredit) expect(paid).toBeLessThanOrEqual(creditById.get(id)!.amount);
        for (const [key, paid] of paidToRemittance) {
          const r = remittanceByKey.get(key)!;
          const total = paid.reduce((sum, m) => sum + m.amount, 0);
          // One rule per remittance, and one match per remittance unless one_to_many.
          expect(new Set(paid.map((m) => m.rule)).size).toBe(1);
          if (paid[0]!.rule !== 'one_to_many') expect(paid).toHaveLength(1);
          if (paid[0]!.rule === 'tolerance') expect(Math.abs(total - r.outstanding)).toBeLessThanOrEqual(toleranceMinor);
          else expect(total).toBe(r.outstanding);
        }
        // Every rule uses a matched credit whole (tolerance included), and by one rule only.
        for (const [id, paid] of paidFromCredit) {
          const rules = new Set(matches.filter((m) => m.creditId === id).map((m) => m.rule));
          expect(rules.size).toBe(1);
          expect(paid).toBe(creditById.get(id)!.amount);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('a credit pays only what its text names on token boundaries, and only what it names alone (or, many_to_one, whole and all open)', () => {
    fc.assert(
      fc.property(worldArbitrary(), (world) => {
        const matches = matchCredits(world.credits, world.remittances, world.knownReferences, { toleranceMinor: world.toleranceMinor, refusedPairs: refusedPairsOf(world) });
        const creditById = new Map(world.credits.map((c) => [c.id, c]));
        for (const m of matches) {
          const { reference } = creditById.get(m.creditId)!;
          const { whole, cutShort } = namedBy(reference, world);
          const named = whole.length > 0 ? whole : cutShort;
          // Never a remittance paid already, never one it names beside a paid one.
          expect(named.some((r) => world.knownReferences.includes(r as KnownReference))).toBe(false);
          expect(named.some((r) => r.payrollId === m.payrollId && r.payDate === m.payDate)).toBe(true);
          if (m.rule === 'many_to_one') {
            expect(whole.length).toBeGreaterThanOrEqual(2);
            expect(matches.filter((other) => other.creditId === m.creditId)).toHaveLength(whole.length);
          } else {
            expect(named).toHaveLength(1);
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('a credit whose text names a remittance paid already, whole, is never matched', () => {
    fc.assert(
      fc.property(worldArbitrary(), (world) => {
        const matched = new Set(
          matchCredits(world.credits, world.remittances, world.knownReferences, { toleranceMinor: world.toleranceMinor, refusedPairs: NOTHING_REFUSED }).map(
            (m) => m.creditId,
          ),
        );
        for (const c of world.credits) {
          if (world.knownReferences.some((known) => namesWhole(c.reference, known.paymentReference))) expect(matched.has(c.id)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the outcome does not depend on the order of the inputs', () => {
    fc.assert(
      fc.property(worldArbitrary(), (world) => {
        const { remittances, knownReferences, credits, toleranceMinor, shuffleKeys } = world;
        const refusedPairs = refusedPairsOf(world);
        const once = matchCredits(credits, remittances, knownReferences, { toleranceMinor, refusedPairs });
        const again = matchCredits(shuffled(credits, shuffleKeys), shuffled(remittances, [...shuffleKeys].reverse()), shuffled(knownReferences, shuffleKeys), {
          toleranceMinor,
          refusedPairs: new Set(shuffled([...refusedPairs], shuffleKeys)),
        });
        expect(again).toEqual(once);
        expect(matchCredits([...credits].reverse(), [...remittances].reverse(), [...knownReferences].reverse(), { toleranceMinor, refusedPairs })).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });

  it('a credit whose reference names no remittance on token boundaries is never matched', () => {
    fc.assert(
      fc.property(worldArbitrary(), (world) => {
        const matched = new Set(
          matchCredits(world.credits, world.remittances, world.knownReferences, { toleranceMinor: world.toleranceMinor, refusedPairs: NOTHING_REFUSED }).map(
            (m) => m.creditId,
          ),
        );
        for (const c of world.credits) {
          if (!world.remittances.some((r) => namesWhole(c.reference, r.paymentReference) || namesCutShort(c.reference, r.paymentReference)))
            expect(matched.has(c.id)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a lone credit: a refused pair among what it would pay leaves it for a person, any other refusal changes nothing', () => {
    fc.assert(
      fc.property(worldArbitrary(), fc.nat(), (world, which) => {
        fc.pre(world.credits.length > 0);
        const lone = [world.credits[which % world.credits.length]!];
        const run = (refusedPairs: ReadonlySet<string>) =>
          matchCredits(lone, world.remittances, world.knownReferences, { toleranceMinor: world.toleranceMinor, refusedPairs });
        const free = run(NOTHING_REFUSED);
        const refused = refusedPairsOf({ ...world, credits: lone });
        const hit = free.some((m) => refused.has(pairKey(m.creditId, m.payrollId, m.payDate)));
        expect(run(refused)).toEqual(hit ? [] : free);
      }),
      { numRuns: 300 },
    );
  });

  it('a credit for the exact reference and amount of a remittance no other credit claims is always matched exactly', () => {
    fc.assert(
      fc.property(remittancesArbitrary, fc.nat(), fc.integer({ min: 0, max: 6 }), (all, which, toleranceMinor) => {
        const open = openOf(all);
        fc.pre(open.length > 0);
        const target = open[which % open.length]!;
        const c = credit('only', target.outstanding, target.paymentReference, { currency: target.currency });
        expect(matchCredits([c], open, knownOf(all), { toleranceMinor, refusedPairs: NOTHING_REFUSED })).toEqual([
          { creditId: 'only', payrollId: target.payrollId, payDate: target.payDate, amount: target.outstanding, rule: 'exact', flagged: false },
        ]);
      }),
    );
  });
});
