import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../support/property-seed.ts';
import { remittancePaymentReference } from '../../src/instructions/payment-reference.ts';
import {
  matchCredits,
  normaliseReference,
  type OpenRemittance,
  type ProposedMatch,
  type UnmatchedCredit,
} from '../../src/cash/remittance-matching.ts';

const PAY_DATE = '2026-10-30';

function remittance(payrollNumber: number, outstanding: number, overrides: Partial<OpenRemittance> = {}): OpenRemittance {
  return {
    payrollId: `payroll-${String(payrollNumber).padStart(3, '0')}`,
    payDate: PAY_DATE,
    employerId: 'employer-a',
    currency: 'GBP',
    paymentReference: remittancePaymentReference(PAY_DATE, payrollNumber),
    outstanding,
    ...overrides,
  };
}

function credit(id: string, amount: number, reference: string | null, overrides: Partial<UnmatchedCredit> = {}): UnmatchedCredit {
  return { id, amount, currency: 'GBP', reference, bookingDate: '2026-10-30', ...overrides };
}

const match = (creditId: string, payrollNumber: number, amount: number, rule: ProposedMatch['rule']): ProposedMatch => ({
  creditId,
  payrollId: `payroll-${String(payrollNumber).padStart(3, '0')}`,
  payDate: PAY_DATE,
  amount,
  rule,
  flagged: rule === 'tolerance',
});

const NO_TOLERANCE = { toleranceMinor: 0 };

describe('normaliseReference', () => {
  it.each([
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

describe('matchCredits, rule by rule', () => {
  it('exact: the reference as issued (trimmed) and the amount outstanding', () => {
    expect(matchCredits([credit('c1', 1250, '  SDR261030P12 ')], [remittance(12, 1250)], NO_TOLERANCE)).toEqual([match('c1', 12, 1250, 'exact')]);
  });

  it('exact needs the amount too: a different amount is not matched without tolerance', () => {
    expect(matchCredits([credit('c1', 1249, 'SDR261030P12')], [remittance(12, 1250)], NO_TOLERANCE)).toEqual([]);
  });

  it('a credit in another currency never pays a remittance', () => {
    expect(matchCredits([credit('c1', 1250, 'SDR261030P12', { currency: 'EUR' })], [remittance(12, 1250)], { toleranceMinor: 100 })).toEqual([]);
  });

  it('a credit without a reference, or with one that names nothing, is left alone', () => {
    const remittances = [remittance(12, 1250)];
    expect(matchCredits([credit('c1', 1250, null), credit('c2', 1250, ''), credit('c3', 1250, 'OCTOBER PAYROLL')], remittances, { toleranceMinor: 100 })).toEqual([]);
  });

  it.each([
    ['lower case, spaces and dashes', 'sdr 261030-p12'],
    ['inside other words', 'ACME LTD SDR261030P12 OCT'],
    ['inside other words, separators stripped by the bank', 'ACMELTDSDR261030P12OCT'],
    ['with slashes', 'SDR/261030/P12'],
  ])('normalised: %s', (_, reference) => {
    expect(matchCredits([credit('c1', 1250, reference)], [remittance(12, 1250)], NO_TOLERANCE)).toEqual([match('c1', 12, 1250, 'normalised')]);
  });

  it('normalised: a reference the bank cut short still names the remittance with 12 or more characters left', () => {
    const long = remittance(12_345_678, 900);
    expect(long.paymentReference).toBe('SDR261030P12345678');
    expect(matchCredits([credit('c1', 900, 'SDR261030P12')], [long], NO_TOLERANCE)).toEqual([match('c1', 12_345_678, 900, 'normalised')]);
    expect(matchCredits([credit('c1', 900, 'ACME SDR261030P1234')], [long], NO_TOLERANCE)).toEqual([match('c1', 12_345_678, 900, 'normalised')]);
  });

  it('a cut-off reference of fewer than 12 characters names nothing', () => {
    expect(matchCredits([credit('c1', 900, 'SDR261030P1')], [remittance(12_345_678, 900)], { toleranceMinor: 10 })).toEqual([]);
  });

  it('a cut-off reference only counts at the end of the text (the bank cuts the end)', () => {
    expect(matchCredits([credit('c1', 900, 'SDR261030P1234 OCT')], [remittance(12_345_678, 900)], NO_TOLERANCE)).toEqual([]);
  });

  it('a cut-off reference two remittances start with names neither', () => {
    const remittances = [remittance(12_345_678, 900), remittance(12_345_679, 900)];
    expect(matchCredits([credit('c1', 900, 'SDR261030P1234567')], remittances, { toleranceMinor: 10 })).toEqual([]);
  });

  it('a whole reference outranks one it could be a cut-off of', () => {
    const remittances = [remittance(12, 500), remittance(123, 500)];
    expect(matchCredits([credit('c1', 500, 'sdr261030p12')], remittances, NO_TOLERANCE)).toEqual([match('c1', 12, 500, 'normalised')]);
  });

  it('P12 does not also name P1: a reference ending in digits ends where the digits end', () => {
    const remittances = [remittance(1, 700), remittance(12, 700)];
    expect(matchCredits([credit('c1', 700, 'PAY SDR261030P12')], remittances, NO_TOLERANCE)).toEqual([match('c1', 12, 700, 'normalised')]);
    expect(matchCredits([credit('c1', 700, 'PAY SDR261030P1 OCT')], remittances, NO_TOLERANCE)).toEqual([match('c1', 1, 700, 'normalised')]);
  });

  it('digits the payer separated by a space could be either: naming both, it names neither', () => {
    const remittances = [remittance(1, 700), remittance(12, 700)];
    expect(matchCredits([credit('c1', 700, 'SDR261030P1 2')], remittances, { toleranceMinor: 5 })).toEqual([]);
  });

  it('two remittances with the same reference are named by neither (no guessing)', () => {
    const remittances = [remittance(12, 700), remittance(13, 700, { paymentReference: 'SDR261030P12' })];
    expect(matchCredits([credit('c1', 700, 'SDR261030P12')], remittances, { toleranceMinor: 5 })).toEqual([]);
  });

  it('many_to_one: one credit for two pay dates of one employer, for the sum of both', () => {
    const remittances = [remittance(12, 300), remittance(13, 450)];
    expect(matchCredits([credit('c1', 750, 'SDR261030P12 SDR261030P13')], remittances, NO_TOLERANCE)).toEqual([
      match('c1', 12, 300, 'many_to_one'),
      match('c1', 13, 450, 'many_to_one'),
    ]);
    expect(matchCredits([credit('c1', 750, 'SDR261030P13SDR261030P12')], remittances, NO_TOLERANCE)).toHaveLength(2);
  });

  it('many_to_one needs the exact sum, one employer, one currency, and every named remittance open', () => {
    const reference = 'SDR261030P12 SDR261030P13';
    expect(matchCredits([credit('c1', 751, reference)], [remittance(12, 300), remittance(13, 450)], NO_TOLERANCE)).toEqual([]);
    expect(matchCredits([credit('c1', 750, reference)], [remittance(12, 300), remittance(13, 450, { employerId: 'employer-b' })], NO_TOLERANCE)).toEqual([]);
    expect(matchCredits([credit('c1', 750, reference)], [remittance(12, 300), remittance(13, 450, { currency: 'EUR' })], NO_TOLERANCE)).toEqual([]);
    // c0 pays P13 exactly first; c1 names P13 too, so it is not a clean many_to_one any more.
    expect(
      matchCredits([credit('c0', 450, 'SDR261030P13'), credit('c1', 300, reference)], [remittance(12, 300), remittance(13, 450)], NO_TOLERANCE),
    ).toEqual([match('c0', 13, 450, 'exact')]);
  });

  it('many_to_one does not pick a subset of the named remittances', () => {
    const remittances = [remittance(12, 300), remittance(13, 450), remittance(14, 50)];
    expect(matchCredits([credit('c1', 750, 'SDR261030P12 SDR261030P13 SDR261030P14')], remittances, NO_TOLERANCE)).toEqual([]);
  });

  it('one_to_many: two credits for one remittance that add up to it', () => {
    const credits = [credit('c2', 400, 'SDR261030P12', { bookingDate: '2026-10-31' }), credit('c1', 600, 'sdr 261030 p12')];
    expect(matchCredits(credits, [remittance(12, 1000)], NO_TOLERANCE)).toEqual([match('c1', 12, 600, 'one_to_many'), match('c2', 12, 400, 'one_to_many')]);
  });

  it('one_to_many takes the earliest credits that add up exactly, and leaves the later ones', () => {
    const credits = [
      credit('c1', 600, 'SDR261030P12', { bookingDate: '2026-10-29' }),
      credit('c2', 400, 'SDR261030P12', { bookingDate: '2026-10-30' }),
      credit('c3', 400, 'SDR261030P12', { bookingDate: '2026-10-31' }),
    ];
    expect(matchCredits(credits, [remittance(12, 1000)], NO_TOLERANCE)).toEqual([match('c1', 12, 600, 'one_to_many'), match('c2', 12, 400, 'one_to_many')]);
  });

  it('one_to_many only tries the leading credits in booking order (no subset search)', () => {
    const credits = [
      credit('c1', 500, 'SDR261030P12', { bookingDate: '2026-10-29' }),
      credit('c2', 300, 'SDR261030P12', { bookingDate: '2026-10-30' }),
      credit('c3', 200, 'SDR261030P12', { bookingDate: '2026-10-31' }),
    ];
    // 500 + 200 would pay 700, but 500 + 300 is the leading pair and overshoots.
    expect(matchCredits(credits, [remittance(12, 700)], NO_TOLERANCE)).toEqual([]);
  });

  it('one_to_many orders credits booked the same day by id', () => {
    const credits = [credit('c-b', 300, 'SDR261030P12'), credit('c-a', 700, 'SDR261030P12'), credit('c-c', 300, 'SDR261030P12')];
    expect(matchCredits(credits, [remittance(12, 1000)], NO_TOLERANCE)).toEqual([match('c-a', 12, 700, 'one_to_many'), match('c-b', 12, 300, 'one_to_many')]);
  });

  it('tolerance: a credit a little short matches whole, flagged', () => {
    expect(matchCredits([credit('c1', 995, 'SDR261030P12')], [remittance(12, 1000)], { toleranceMinor: 5 })).toEqual([match('c1', 12, 995, 'tolerance')]);
  });

  it('tolerance: a credit a little over matches whole, flagged, so the credit is used up', () => {
    expect(matchCredits([credit('c1', 1005, 'ACME SDR261030P12')], [remittance(12, 1000)], { toleranceMinor: 5 })).toEqual([match('c1', 12, 1005, 'tolerance')]);
  });

  it('tolerance: one minor unit beyond it is not matched', () => {
    expect(matchCredits([credit('c1', 994, 'SDR261030P12'), credit('c2', 1006, 'SDR261030P13')], [remittance(12, 1000), remittance(13, 1000)], { toleranceMinor: 5 })).toEqual([]);
  });

  it('credits competing for one remittance: the earliest booked wins, then the lowest id', () => {
    const remittances = [remittance(12, 1000)];
    const later = credit('c0', 1000, 'SDR261030P12', { bookingDate: '2026-10-31' });
    expect(matchCredits([later, credit('c9', 1000, 'SDR261030P12')], remittances, NO_TOLERANCE)).toEqual([match('c9', 12, 1000, 'exact')]);
    expect(matchCredits([credit('c2', 1000, 'SDR261030P12'), credit('c1', 1000, 'SDR261030P12')], remittances, NO_TOLERANCE)).toEqual([match('c1', 12, 1000, 'exact')]);
  });

  it('the rules apply in order: an exact match is taken before a later credit could pay it by tolerance', () => {
    const credits = [credit('c1', 998, 'SDR261030P12', { bookingDate: '2026-10-29' }), credit('c2', 1000, 'sdr261030p12')];
    expect(matchCredits(credits, [remittance(12, 1000)], { toleranceMinor: 5 })).toEqual([match('c2', 12, 1000, 'normalised')]);
  });

  it('a remittance used by a many_to_one is not offered to a one_to_many', () => {
    const credits = [
      credit('c1', 750, 'SDR261030P12 SDR261030P13', { bookingDate: '2026-10-29' }),
      credit('c2', 200, 'SDR261030P12'),
      credit('c3', 100, 'SDR261030P12'),
    ];
    expect(matchCredits(credits, [remittance(12, 300), remittance(13, 450)], NO_TOLERANCE)).toEqual([
      match('c1', 12, 300, 'many_to_one'),
      match('c1', 13, 450, 'many_to_one'),
    ]);
  });

  it('refuses inputs it cannot order or trust', () => {
    expect(() => matchCredits([credit('c1', 1, 'X'), credit('c1', 2, 'Y')], [], NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([], [remittance(12, 1), remittance(12, 2)], NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([credit('c1', 0, 'X')], [], NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([credit('c1', 1.5, 'X')], [], NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([], [remittance(12, -1)], NO_TOLERANCE)).toThrow(RangeError);
    expect(() => matchCredits([], [], { toleranceMinor: -1 })).toThrow(RangeError);
    expect(() => matchCredits([], [], { toleranceMinor: 0.5 })).toThrow(RangeError);
  });

  it('nothing in, nothing out', () => {
    expect(matchCredits([], [], NO_TOLERANCE)).toEqual([]);
    expect(matchCredits([credit('c1', 1, 'SDR261030P12')], [], NO_TOLERANCE)).toEqual([]);
    expect(matchCredits([], [remittance(12, 1)], NO_TOLERANCE)).toEqual([]);
  });
});

// A small world where references collide on purpose (P1, P12, P123 on the same pay dates), amounts
// are small so sums coincide, and credits reference remittances in every way banks deliver them.
const PAY_DATES = ['2026-10-30', '2026-11-27'];
const PAYROLL_NUMBERS = [1, 2, 12, 13, 123, 1234, 12_345_678, 12_345_679];

const remittancesArbitrary = fc
  .uniqueArray(
    fc.record({
      payDate: fc.constantFrom(...PAY_DATES),
      number: fc.constantFrom(...PAYROLL_NUMBERS),
      employerId: fc.constantFrom('employer-a', 'employer-b'),
      currency: fc.constantFrom('GBP', 'GBP', 'EUR'),
      outstanding: fc.integer({ min: 1, max: 40 }),
    }),
    { selector: (r) => `${r.number}|${r.payDate}`, minLength: 1, maxLength: 8 },
  )
  .map((rows) =>
    rows.map(
      (row): OpenRemittance => ({
        payrollId: `payroll-${row.number}`,
        payDate: row.payDate,
        employerId: row.employerId,
        currency: row.currency,
        paymentReference: remittancePaymentReference(row.payDate, row.number),
        outstanding: row.outstanding,
      }),
    ),
  );

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
  ][how % 8]!;

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

/** A credit aimed at one remittance: its reference as banks deliver it, its amount exact, near, or a part of it. */
function aimedCreditArbitrary(remittances: readonly OpenRemittance[]): fc.Arbitrary<CreditDraft> {
  return fc
    .record({ target: fc.constantFrom(...remittances), how: fc.nat(), amountKind: fc.nat({ max: 3 }), offset: fc.integer({ min: -7, max: 7 }), otherCurrency: fc.boolean() })
    .map(({ target, how, amountKind, offset, otherCurrency }) => ({
      reference: mangle(target.paymentReference, how),
      amount: Math.max(1, [target.outstanding, target.outstanding + offset, Math.ceil(target.outstanding / 2), target.outstanding - Math.ceil(target.outstanding / 2) || 1][amountKind]!),
      currency: otherCurrency && how % 5 === 0 ? (target.currency === 'GBP' ? 'EUR' : 'GBP') : target.currency,
    }));
}

/** A credit for several remittances at once, for the sum they are owed (or a little off it). */
function combinedCreditArbitrary(remittances: readonly OpenRemittance[]): fc.Arbitrary<CreditDraft> {
  return fc
    .record({ targets: fc.subarray([...remittances], { minLength: 1, maxLength: Math.min(3, remittances.length) }), separator: fc.constantFrom('', ' ', ' / '), off: fc.constantFrom(0, 0, 1) })
    .map(({ targets, separator, off }) => ({
      reference: targets.map((r) => r.paymentReference).join(separator),
      amount: targets.reduce((sum, r) => sum + r.outstanding, 0) + off,
      currency: targets[0]!.currency,
    }));
}

function worldArbitrary() {
  return remittancesArbitrary.chain((remittances) =>
    fc.record({
      remittances: fc.constant(remittances),
      credits: fc
        .array(
          fc.record({
            draft: fc.oneof(
              fc.record({ amount: fc.integer({ min: 1, max: 90 }), currency: fc.constantFrom('GBP', 'GBP', 'EUR'), reference: referenceArbitrary(remittances) }),
              aimedCreditArbitrary(remittances),
              aimedCreditArbitrary(remittances),
              combinedCreditArbitrary(remittances),
            ),
            bookingDate: fc.constantFrom('2026-10-29', '2026-10-30', '2026-10-31'),
            idSuffix: fc.integer({ min: 0, max: 99 }),
          }),
          { maxLength: 12 },
        )
        .map((rows) => rows.map(({ draft, bookingDate, idSuffix }, index): UnmatchedCredit => ({ id: `credit-${idSuffix}-${index}`, bookingDate, ...draft }))),
      toleranceMinor: fc.integer({ min: 0, max: 6 }),
      shuffleKeys: fc.array(fc.double({ noNaN: true }), { minLength: 40, maxLength: 40 }),
    }),
  );
}

const shuffled = <T>(items: readonly T[], keys: readonly number[]): T[] =>
  items
    .map((item, index) => ({ item, key: keys[index % keys.length]! + index * 1e-9 }))
    .sort((a, b) => a.key - b.key)
    .map(({ item }) => item);

/** Independent of the code: does the credit's text name the remittance at all (whole, or cut to 12+ at its end)? */
function namesAtAll(reference: string | null, paymentReference: string): boolean {
  if (reference === null) return false;
  const text = reference.toUpperCase().replace(/[^A-Z0-9]/g, '');
  if (text.includes(paymentReference)) return true;
  for (let length = 12; length <= Math.min(text.length, paymentReference.length); length++) {
    if (paymentReference.startsWith(text.slice(text.length - length))) return true;
  }
  return false;
}

describe('matchCredits, properties', () => {
  it('never pays more than a credit holds, nor more than a remittance is owed except by a flagged tolerance; currencies agree', () => {
    fc.assert(
      fc.property(worldArbitrary(), ({ remittances, credits, toleranceMinor }) => {
        const matches = matchCredits(credits, remittances, { toleranceMinor });
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
          expect(namesAtAll(c.reference, r.paymentReference)).toBe(true);
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

  it('the outcome does not depend on the order of the inputs', () => {
    fc.assert(
      fc.property(worldArbitrary(), ({ remittances, credits, toleranceMinor, shuffleKeys }) => {
        const once = matchCredits(credits, remittances, { toleranceMinor });
        const again = matchCredits(shuffled(credits, shuffleKeys), shuffled(remittances, [...shuffleKeys].reverse()), { toleranceMinor });
        expect(again).toEqual(once);
        expect(matchCredits([...credits].reverse(), [...remittances].reverse(), { toleranceMinor })).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });

  it('a credit whose reference names no remittance is never matched', () => {
    fc.assert(
      fc.property(worldArbitrary(), ({ remittances, credits, toleranceMinor }) => {
        const matched = new Set(matchCredits(credits, remittances, { toleranceMinor }).map((m) => m.creditId));
        for (const c of credits) {
          if (!remittances.some((r) => namesAtAll(c.reference, r.paymentReference))) expect(matched.has(c.id)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a credit for the exact reference and amount of a remittance no other credit claims is always matched exactly', () => {
    fc.assert(
      fc.property(remittancesArbitrary, fc.nat(), fc.integer({ min: 0, max: 6 }), (remittances, which, toleranceMinor) => {
        const target = remittances[which % remittances.length]!;
        const c = credit('only', target.outstanding, target.paymentReference, { currency: target.currency });
        expect(matchCredits([c], remittances, { toleranceMinor })).toEqual([
          { creditId: 'only', payrollId: target.payrollId, payDate: target.payDate, amount: target.outstanding, rule: 'exact', flagged: false },
        ]);
      }),
    );
  });
});
