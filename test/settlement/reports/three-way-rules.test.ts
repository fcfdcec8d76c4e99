import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { describe, expect, it } from 'vitest';
import type { RemittanceStatus } from '../../../src/platform/db/tables.ts';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { fundableEntries, type FundingCandidate } from '../../../src/settlement/cash/funding-order.ts';
import {
  explainThreeWay,
  firstLateDay,
  threeWayColumns,
  threeWayGaps,
  threeWayGapSizes,
  threeWayParts,
  threeWayTotals,
  toThreeWayCsvCells,
  toThreeWayRecord,
  type ThreeWayRow,
} from '../../../src/settlement/reports/three-way-report.ts';

/** A payroll pay date where every figure agrees: 248.00 requested, deducted, received, funded and paid out. */
function agreeing(overrides: Partial<ThreeWayRow> = {}): ThreeWayRow {
  return {
    payroll_id: '019a7b2c-0000-7000-8000-000000000001',
    employer: 'Acme Ltd',
    payroll: 'Monthly',
    pay_date: '2026-10-30',
    currency: 'GBP',
    payment_reference: 'SDR261030P12',
    requested: 24_800,
    deducted: 24_800,
    expected: 24_800,
    received: 24_800,
    remittance_status: 'received',
    due_date: '2026-11-04',
    shortfall: 0,
    funded: 24_800,
    paid_out: 24_800,
    held_back: 0,
    fundable: 0,
    netting: 0,
    next_request: 0,
    ...overrides,
  };
}

/** Every gap between consecutive figures, and what is held back, is what the parts account for in it. */
function expectEveryPennyExplained(row: ThreeWayRow): void {
  const parts = threeWayParts(row);
  const sizes = threeWayGapSizes(row);
  for (const gap of threeWayGaps) {
    const explained = parts.reduce((sum, part) => sum + (part.amounts[gap] ?? 0), 0);
    expect(explained, `${gap} of ${JSON.stringify(row)}: ${explainThreeWay(row)}`).toBe(sizes[gap]);
  }
}

describe('explainThreeWay', () => {
  it.each<[string, Partial<ThreeWayRow>, string]>([
    ['everything agrees', {}, 'All paid out.'],
    ['nothing was asked for', { requested: 0, deducted: 0, expected: 0, received: 0, funded: 0, paid_out: 0 }, 'All paid out.'],
    // Payroll's report.
    [
      'a short deduction, remitted and paid in full',
      { deducted: 20_800, expected: 20_800, received: 20_800, funded: 20_800, paid_out: 20_800 },
      'Payroll deducted £40.00 less than requested.',
    ],
    // The over-deduction is held as an exception, never paid out: its cash stays unused.
    [
      'an over-deduction remitted in full',
      { deducted: 25_300, expected: 25_300, received: 25_300 },
      'Payroll deducted £5.00 more than requested; £5.00 received that no collection needs.',
    ],
    [
      'no payroll report yet, nothing collected, not yet due',
      { deducted: null, received: 0, remittance_status: 'expected', funded: 0, paid_out: 0 },
      'Payroll has not reported its deductions yet; nothing received, not yet due (due 2026-11-04).',
    ],
    [
      'cash received before payroll has reported',
      { deducted: null, funded: 0, paid_out: 0 },
      'Payroll has not reported its deductions yet; £248.00 received, funding nothing until payroll reports.',
    ],
    // The employer's remittance.
    [
      'nothing received yet, within the grace',
      { received: 0, remittance_status: 'expected', funded: 0, paid_out: 0, held_back: 24_800 },
      'Nothing received, not yet due (due 2026-11-04); £248.00 held back until the remittance arrives.',
    ],
    [
      'nothing received after the due date',
      { received: 0, remittance_status: 'late', funded: 0, paid_out: 0, held_back: 24_800 },
      'Nothing received, late since 2026-11-05; £248.00 held back until the remittance arrives.',
    ],
    [
      'a trusted employer paid out before the cash came',
      { received: 0, remittance_status: 'late' },
      'Nothing received, late since 2026-11-05; £248.00 funded before the cash arrived (employer trusted to remit).',
    ],
    [
      'a short remittance holding back what it does not cover',
      { received: 20_000, remittance_status: 'short', funded: 12_550, paid_out: 12_550, held_back: 12_250, next_request: 8_000 },
      'Employer remitted £48.00 less than deducted (short); £74.50 received, not enough to fund the next whole payment request (£80.00); ' +
        '£122.50 held back until £48.00 more arrives.',
    ],
    [
      'a short remittance before payroll has reported',
      { deducted: null, received: 20_000, remittance_status: 'short', funded: 12_550, paid_out: 12_550, held_back: 12_250, next_request: 8_000 },
      'Payroll has not reported its deductions yet; employer remitted £48.00 less than requested (short); ' +
        '£74.50 received, not enough to fund the next whole payment request (£80.00); £122.50 held back until £48.00 more arrives.',
    ],
    ['an over-remittance', { received: 25_000, remittance_status: 'over' }, 'Employer remitted £2.00 more than deducted (over); £2.00 received that no collection needs.'],
    // Issue 34: 100.00 received of 115.00, 75.00 paid out; the 25.00 received does not fund the 40.00 request next in line.
    [
      'cash received that does not fund the next whole request',
      {
        requested: 11_500,
        deducted: 11_500,
        expected: 11_500,
        received: 10_000,
        remittance_status: 'short',
        funded: 7_500,
        paid_out: 7_500,
        held_back: 4_000,
        next_request: 4_000,
      },
      'Employer remitted £15.00 less than deducted (short); £25.00 received, not enough to fund the next whole payment request (£40.00); ' +
        '£40.00 held back until £15.00 more arrives.',
    ],
    [
      'the same before the payout run has funded anything',
      {
        requested: 11_500,
        deducted: 11_500,
        expected: 11_500,
        received: 10_000,
        remittance_status: 'short',
        funded: 0,
        paid_out: 0,
        held_back: 11_500,
        fundable: 7_500,
        next_request: 4_000,
      },
      'Employer remitted £15.00 less than deducted (short); £75.00 held back, funded from the cash received at the next payout run; ' +
        '£25.00 received, not enough to fund the next whole payment request (£40.00); £40.00 held back until £15.00 more arrives.',
    ],
    [
      'received in full, before the payout run',
      { funded: 0, paid_out: 0, held_back: 24_800, fundable: 24_800 },
      '£248.00 held back, funded from the cash received at the next payout run.',
    ],
    // Funding and payouts.
    ['funded, waiting for the payout run', { paid_out: 0 }, '£248.00 funded, not yet paid out (next payout run).'],
    ['partly paid out', { paid_out: 12_550 }, '£122.50 funded, not yet paid out (next payout run).'],
    [
      'a funded reversal waiting to be netted',
      { deducted: 24_300, expected: 24_300, remittance_status: 'over', funded: 24_300, paid_out: 24_800 },
      'Payroll deducted £5.00 less than requested; employer remitted £5.00 more than deducted (over); ' +
        '£5.00 received that no collection needs; £5.00 reversed, to be netted in the next payout run.',
    ],
    // A request netting below zero costs no cash: the next run funds it, and the cash it frees stays unused.
    ['an unfunded reversal', { held_back: -500, netting: -500 }, '£5.00 reversed, to be netted in the next payout run; £5.00 received that no collection needs.'],
    [
      'the bank took back a credit already paid out',
      { received: 0, remittance_status: 'shortfall', shortfall: 24_800 },
      'Nothing received any more; the bank took back money already paid out: £248.00 owed back (shortfall).',
    ],
    [
      'a collection after a shortfall waits for the shortfall to be paid back first',
      { received: 4_800, remittance_status: 'shortfall', shortfall: 15_200, funded: 20_000, paid_out: 20_000, held_back: 4_800, next_request: 4_800 },
      'Employer remitted £200.00 less than deducted (short); the bank took back money already paid out: £152.00 owed back (shortfall); ' +
        '£48.00 held back until £200.00 more arrives.',
    ],
    [
      'every difference at once',
      {
        deducted: 20_800,
        expected: 20_800,
        received: 16_000,
        remittance_status: 'short',
        funded: 12_550,
        paid_out: 8_000,
        held_back: 8_250,
        next_request: 8_250,
      },
      'Payroll deducted £40.00 less than requested; employer remitted £48.00 less than deducted (short); ' +
        '£34.50 received, not enough to fund the next whole payment request (£82.50); £82.50 held back until £48.00 more arrives; ' +
        '£45.50 funded, not yet paid out (next payout run).',
    ],
    [
      'a currency without minor units',
      { currency: 'JPY', deducted: 24_000, expected: 24_000, received: 24_000, funded: 24_000, paid_out: 24_000 },
      'Payroll deducted 800 JPY less than requested.',
    ],
  ])('%s', (_name, overrides, explanation) => {
    const row = agreeing(overrides);
    expect(explainThreeWay(row)).toBe(explanation);
    expectEveryPennyExplained(row);
  });

  it('accounts for every penny of a small grid of figures, consistent or not, and names each amount it accounts for', () => {
    const statuses: RemittanceStatus[] = ['short', 'late'];
    let rows = 0;
    for (const requested of [0, 100, 250])
      for (const deducted of [null, 0, 100, 250])
        for (const expectedOffset of [0, 50])
          for (const received of [0, 100, 250])
            for (const funded of [0, 100, 250])
              for (const paidOut of [0, 100, 250])
                for (const heldBack of [-100, 0, 100, 250])
                  for (const fundable of [0, 100])
                    for (const netting of [0, -100])
                      for (const shortfall of [0, 100])
                        for (const status of statuses) {
                          const row = agreeing({
                            requested,
                            deducted,
                            expected: (deducted ?? requested) + expectedOffset,
                            received,
                            remittance_status: status,
                            funded,
                            paid_out: paidOut,
                            held_back: heldBack,
                            fundable,
                            netting,
                            next_request: fundable === 0 ? 150 : 0,
                            shortfall,
                          });
                          rows += 1;
                          const parts = threeWayParts(row);
                          const sizes = threeWayGapSizes(row);
                          for (const gap of threeWayGaps) {
                            if (parts.reduce((sum, part) => sum + (part.amounts[gap] ?? 0), 0) !== sizes[gap]) expectEveryPennyExplained(row);
                          }
                          for (const part of parts) {
                            // "Nothing received" names the whole of what is expected; the shortfall names what is owed back.
                            if (part.kind === 'nothing_received') continue;
                            const named = part.kind === 'shortfall' ? [row.shortfall] : Object.values(part.amounts).map((amount) => Math.abs(amount));
                            if (named.length > 0 && !named.some((amount) => part.text.includes(formatMoney(amount, 'GBP')))) {
                              expect(part.text, `${part.kind} of ${JSON.stringify(row)}`).toContain(formatMoney(named[0]!, 'GBP'));
                            }
                          }
                          // "All paid out." only when nothing differs; always then, unless the next run would still move money.
                          const agrees = deducted !== null && threeWayGaps.every((gap) => sizes[gap] === 0) && shortfall === 0;
                          const allPaidOut = explainThreeWay(row) === 'All paid out.';
                          if (allPaidOut && !agrees) expect(explainThreeWay(row), JSON.stringify(row)).not.toBe('All paid out.');
                          if (agrees && fundable === 0 && netting === 0 && !allPaidOut) expect(explainThreeWay(row), JSON.stringify(row)).toBe('All paid out.');
                        }
    expect(rows).toBe(3 * 4 * 2 * 3 * 3 * 3 * 4 * 2 * 2 * 2 * 2);
  });

  it('accounts for every penny of any figures', () => {
    const amount = fc.integer({ min: 0, max: 1_000_000 });
    const signed = fc.integer({ min: -100_000, max: 1_000_000 });
    const status = fc.constantFrom<RemittanceStatus>('expected', 'received', 'short', 'over', 'late', 'shortfall');
    fc.assert(
      fc.property(
        fc.record({
          requested: amount,
          deducted: fc.option(amount),
          expected: amount,
          received: amount,
          remittance_status: status,
          funded: signed,
          paid_out: signed,
          held_back: signed,
          fundable: amount,
          netting: fc.integer({ min: -100_000, max: 0 }),
          next_request: amount,
          shortfall: amount,
        }),
        (figures) => {
          const row = agreeing(figures);
          expectEveryPennyExplained(row);
          expect(explainThreeWay(row)).toMatch(/^[A-Z0-9].*\.$/);
        },
      ),
    );
  });

  it('names each difference exactly when it exists, and says "All paid out." only when there is none', () => {
    const amount = fc.integer({ min: 0, max: 1_000_000 });
    const status = fc.constantFrom<RemittanceStatus>('expected', 'received', 'short', 'over', 'late');
    fc.assert(
      fc.property(
        amount,
        fc.option(amount),
        amount,
        status,
        amount,
        amount,
        fc.integer({ min: -10_000, max: 1_000_000 }),
        (requested, deducted, received, remittanceStatus, funded, paidOut, heldBack) => {
          const row = agreeing({
            requested,
            deducted,
            expected: deducted ?? requested,
            received,
            remittance_status: remittanceStatus,
            funded,
            paid_out: paidOut,
            held_back: heldBack,
          });
          const explanation = explainThreeWay(row);
          const expected = deducted ?? requested;
          expect(explanation.toLowerCase().includes('payroll deducted')).toBe(deducted !== null && deducted !== requested);
          expect(explanation.toLowerCase().includes('not reported')).toBe(deducted === null);
          expect(explanation.toLowerCase().includes('nothing received')).toBe(received === 0 && expected > 0);
          expect(explanation.includes('(short)')).toBe(received > 0 && received < expected);
          expect(explanation.includes('(over)')).toBe(received > expected);
          expect(explanation.includes('held back')).toBe(heldBack > 0);
          expect(explanation.includes('funded, not yet paid out')).toBe(funded > paidOut);
          expect(explanation.includes('received, not enough') || explanation.includes('no collection needs') || explanation.includes('until payroll reports')).toBe(
            received > funded,
          );
          expect(explanation.includes('funded before the cash arrived')).toBe(funded > received);
          const agrees = deducted === requested && received === expected && heldBack === 0 && funded === paidOut && received === funded;
          expect(explanation === 'All paid out.').toBe(agrees);
          expect(explanation).toMatch(/^[A-Z0-9].*\.$/);
        },
      ),
    );
  });
});

/**
 * A payroll pay date as the service would leave it: payment requests netting `nets` (oldest first),
 * funded by a payout run from the cash received then (`ran`), paid out or not, and then perhaps more
 * cash received. What is held back and what the next run would fund are worked out by the funding rule
 * itself, as findThreeWayRows works them out in SQL.
 */
function fundedPayDate(world: { nets: number[]; firstCash: number; ran: boolean; paid: boolean; laterCash: number; overDeducted: number; shortDeducted: number }) {
  const entries: FundingCandidate[] = world.nets.map((net, index) => ({ id: `e${index}`, paymentRequestId: `r${index}`, amount: net, requestOrder: index }));
  const fundedIds = new Set(world.ran ? fundableEntries(entries, world.firstCash) : []);
  const sum = (list: readonly FundingCandidate[]) => list.reduce((total, entry) => total + entry.amount, 0);
  const funded = sum(entries.filter((entry) => fundedIds.has(entry.id)));
  const held = entries.filter((entry) => !fundedIds.has(entry.id));
  const received = world.firstCash + (world.ran ? world.laterCash : 0);
  const nextRun = new Set(fundableEntries(held, received - funded));
  const deducted = sum(entries) + world.overDeducted;
  const row = agreeing({
    requested: deducted + world.shortDeducted,
    deducted,
    expected: deducted,
    received,
    remittance_status: received < deducted ? 'short' : received > deducted ? 'over' : 'received',
    funded,
    paid_out: world.paid ? funded : 0,
    held_back: sum(held),
    fundable: sum(held.filter((entry) => entry.amount > 0 && nextRun.has(entry.id))),
    netting: sum(held.filter((entry) => entry.amount <= 0)),
    next_request: held.find((entry) => entry.amount > 0 && !nextRun.has(entry.id))?.amount ?? 0,
  });
  return { row, held, available: received - funded };
}

describe('explainThreeWay over the funding rule', () => {
  const worlds = fc
    .record({
      nets: fc.array(fc.oneof(fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: -3_000, max: 0 })), { maxLength: 6 }),
      firstCash: fc.integer({ min: 0, max: 60_000 }),
      ran: fc.boolean(),
      paid: fc.boolean(),
      laterCash: fc.integer({ min: 0, max: 20_000 }),
      overDeducted: fc.integer({ min: 0, max: 2_000 }),
      shortDeducted: fc.integer({ min: 0, max: 5_000 }),
    })
    .filter((world) => world.nets.reduce((total, net) => total + net, 0) >= 0);

  it('accounts for every penny, and what it says of the cash waiting is what the funding rule does', () => {
    fc.assert(
      fc.property(worlds, (world) => {
        const { row, held, available } = fundedPayDate(world);
        expectEveryPennyExplained(row);
        const parts = threeWayParts(row);
        const kinds = parts.map((part) => part.kind);
        const idle = parts.find((part) => part.kind === 'short_of_next_request');
        // Cash that waits is less than the next request in line, which the next run then leaves held back.
        if (idle) {
          expect(idle.amounts['received-funded']!).toBeLessThan(row.next_request);
          expect(idle.text).toContain(`(${formatMoney(row.next_request, 'GBP')})`);
        }
        // A run that used the cash leaves nothing it could fund with it.
        if (world.ran && world.laterCash === 0) expect(kinds).not.toContain('funded_next_run');
        // Cash-funded: never funded beyond what was received.
        expect(kinds).not.toContain('funded_on_trust');
        // "Held back until £M more arrives": with M more the next run funds it all, with a penny less it does not.
        const waiting = parts.find((part) => part.kind === 'held_back');
        const more = /until (.+) more arrives$/.exec(waiting?.text ?? '');
        if (waiting && more) {
          const owed = row.funded + row.held_back - row.received;
          expect(more[1]).toBe(formatMoney(owed, 'GBP'));
          expect(fundableEntries(held, available + owed)).toHaveLength(held.length);
          expect(fundableEntries(held, available + owed - 1).length).toBeLessThan(held.length);
        }
        if (waiting) expect(row.received === 0 || more !== null).toBe(true);
        // The cash the next run leaves unused is named whole: waiting for a request, or needed by none.
        const unused = row.received - row.funded - row.fundable - row.netting;
        const named = parts.filter((part) => part.kind === 'short_of_next_request' || part.kind === 'not_needed');
        expect(named.reduce((total, part) => total + part.amounts['received-funded']!, 0)).toBe(Math.max(0, unused));
      }),
      { numRuns: 300 },
    );
  });
});

describe('firstLateDay', () => {
  it.each([
    ['2026-11-04', '2026-11-05'],
    ['2026-12-31', '2027-01-01'],
    ['2028-02-28', '2028-02-29'],
    ['2027-02-28', '2027-03-01'],
  ])('a remittance due %s is late from %s', (due, late) => {
    expect(firstLateDay(due)).toBe(late);
  });
});

describe('toThreeWayRecord and the CSV cells', () => {
  it('writes money in major units, a missing payroll report as an empty cell, and the explanation last', () => {
    const record = toThreeWayRecord(agreeing({ deducted: null, received: 0, remittance_status: 'expected', funded: 0, paid_out: 0, held_back: 24_800 }));
    expect(Object.keys(record)).toEqual([...threeWayColumns]);
    expect(record).toMatchObject({ requested: '248.00', deducted: '', expected: '248.00', received: '0.00', funded: '0.00', paid_out: '0.00', held_back: '248.00' });
    expect(record.explanation).toBe(explainThreeWay(agreeing({ deducted: null, received: 0, remittance_status: 'expected', funded: 0, paid_out: 0, held_back: 24_800 })));
  });

  it('neutralises formulas in the names from outside, never in amounts', () => {
    const cells = toThreeWayCsvCells(toThreeWayRecord(agreeing({ employer: '=HYPERLINK("x")', payroll: '+Weekly', held_back: -500 })));
    expect(cells[threeWayColumns.indexOf('employer')]).toBe(`'=HYPERLINK("x")`);
    expect(cells[threeWayColumns.indexOf('payroll')]).toBe(`'+Weekly`);
    expect(cells[threeWayColumns.indexOf('held_back')]).toBe('-5.00');
  });
});

describe('threeWayTotals', () => {
  it('adds up per currency, a missing payroll report as nothing deducted', () => {
    const rows = [
      agreeing(),
      agreeing({ deducted: null, received: 0, funded: 0, paid_out: 0, held_back: 1_000 }),
      agreeing({ currency: 'EUR', requested: 100, deducted: 90, expected: 90, received: 90, funded: 90, paid_out: 50 }),
    ];
    expect(threeWayTotals(rows)).toEqual([
      { currency: 'EUR', requested: 100n, deducted: 90n, received: 90n, funded: 90n, paid_out: 50n, held_back: 0n, shortfall: 0n },
      { currency: 'GBP', requested: 49_600n, deducted: 24_800n, received: 24_800n, funded: 24_800n, paid_out: 24_800n, held_back: 1_000n, shortfall: 0n },
    ]);
    expect(threeWayTotals([])).toEqual([]);
  });

  it('stays exact where the total of a pay date’s remittances passes 2^53', () => {
    const large = 999_999_999_999_999;
    const rows = Array.from({ length: 10 }, () => agreeing({ requested: large, deducted: large, expected: large, received: large, funded: 0, paid_out: 0, held_back: 0 }));
    const [total] = threeWayTotals(rows);
    expect(total!.requested).toBe(9_999_999_999_999_990n);
    expect(total!.received).toBe(9_999_999_999_999_990n);
  });
});
