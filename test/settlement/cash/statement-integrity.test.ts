import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import type { ParsedStatement, StatementBalance, StatementEntry, StatementSummary } from '../../../src/settlement/cash/bank-statement.ts';
import { sequenceGap, statementIntegrityFindings, creditsTotalOrProblem } from '../../../src/settlement/cash/statement-integrity.ts';

let line = 10;
function booked(amount: number, direction: 'credit' | 'debit' = 'credit', fields: Partial<StatementEntry> = {}): StatementEntry {
  line += 1;
  return {
    position: { line },
    index: 0,
    bankReference: `R${line}`,
    accountServicerReference: `R${line}`,
    entryReference: null,
    transactionReferences: [],
    batch: null,
    direction,
    reversal: false,
    bankTransactionCode: null,
    returnReason: null,
    amount,
    currency: 'GBP',
    bookingDate: '2026-11-27',
    valueDate: null,
    remittanceInformation: null,
    debtorName: null,
    debtorAccount: null,
    problem: null,
    ...fields,
  };
}

function balance(type: string, amount: number, currency = 'GBP'): StatementBalance {
  return { type, amount, currency, date: '2026-11-27', position: { line: 5 } };
}

function statement(fields: Partial<ParsedStatement> = {}): ParsedStatement {
  return {
    format: 'camt.053',
    statementId: 'S1',
    page: { number: 1, last: true },
    electronicSequenceNumber: null,
    legalSequenceNumber: null,
    account: { sortCode: '60-16-13', accountNumber: '31926819' },
    currency: 'GBP',
    balances: [balance('OPBD', 100_00), balance('CLBD', 100_00)],
    summary: null,
    entries: [],
    ...fields,
  };
}

const codes = (parsed: ParsedStatement) => statementIntegrityFindings(parsed).map((finding) => finding.code);

describe('balances', () => {
  it('finds nothing when opening + booked entries = closing', () => {
    const entries = [booked(50_00), booked(20_00, 'debit'), booked(5_00, 'debit', { reversal: true })];
    expect(statementIntegrityFindings(statement({ balances: [balance('OPBD', 100_00), balance('CLBD', 125_00)], entries }))).toEqual([]);
  });

  it('names the figures that disagree, in major units with the currency', () => {
    const entries = [booked(50_00), booked(20_00, 'debit')];
    expect(statementIntegrityFindings(statement({ balances: [balance('OPBD', -10_00), balance('CLBD', 25_00)], entries }))).toEqual([
      {
        code: 'balance_mismatch',
        detail: "the opening balance (OPBD) -£10.00 and the booked entries' net £30.00 make £20.00, but the closing balance (CLBD) is £25.00: £5.00 unaccounted for",
      },
    ]);
  });

  it('takes PRCD as the opening balance when there is no OPBD, OPBD when there are both', () => {
    const entries = [booked(10_00)];
    expect(codes(statement({ balances: [balance('PRCD', 0), balance('CLBD', 10_00)], entries }))).toEqual([]);
    expect(codes(statement({ balances: [balance('PRCD', 99_00), balance('OPBD', 0), balance('CLBD', 10_00)], entries }))).toEqual([]);
    expect(codes(statement({ balances: [balance('PRCD', 0), balance('CLBD', 11_00)], entries }))).toEqual(['balance_mismatch']);
  });

  it('counts every booked entry: debits, reversals, and problem entries by the amount that could be read', () => {
    const entries = [
      booked(100_00),
      booked(30_00, 'debit', { reversal: true, returnReason: 'AC04' }),
      booked(7_00, 'credit', { problem: "the entry's currency GBP differs from the account's EUR" }),
      booked(0, 'credit', { problem: "the entry's amount is zero" }),
    ];
    expect(codes(statement({ balances: [balance('OPBD', 0), balance('CLBD', 77_00)], entries }))).toEqual([]);
  });

  it('checks nothing without an opening or a closing balance; other balance types do not count', () => {
    const entries = [booked(10_00)];
    expect(codes(statement({ balances: [balance('OPBD', 0)], entries }))).toEqual([]);
    expect(codes(statement({ balances: [balance('CLBD', 0), balance('ITBD', 3)], entries }))).toEqual([]);
    expect(codes(statement({ balances: [balance('OPAV', 0), balance('CLAV', 0)], entries }))).toEqual([]);
  });

  it('checks only a whole statement: a page of a longer one cannot be checked alone', () => {
    const wrong = { balances: [balance('OPBD', 0), balance('CLBD', 1)], summary: { entries: { count: 9, sum: null, net: null }, credits: null, debits: null } };
    expect(codes(statement(wrong))).toEqual(['balance_mismatch', 'summary_count_mismatch']);
    expect(codes(statement({ ...wrong, page: { number: 1, last: false } }))).toEqual([]);
    expect(codes(statement({ ...wrong, page: { number: 2, last: true } }))).toEqual([]);
    expect(codes(statement({ ...wrong, page: { number: 2, last: false } }))).toEqual([]);
  });

  it('leaves out entries in another currency than the balances, and says so', () => {
    const entries = [booked(10_00), booked(99_00, 'credit', { currency: 'EUR', problem: "the entry's currency EUR differs from the account's GBP" })];
    expect(codes(statement({ balances: [balance('OPBD', 0), balance('CLBD', 10_00)], entries }))).toEqual([]);
    const [finding] = statementIntegrityFindings(statement({ balances: [balance('OPBD', 0), balance('CLBD', 0)], entries }));
    expect(finding?.detail).toMatch(/\(1 entry in another currency than GBP left out\)$/);
  });

  it('uses the balances currency when the account names none', () => {
    const entries = [booked(1_000, 'credit', { currency: 'JPY' })];
    expect(codes(statement({ currency: null, balances: [balance('OPBD', 0, 'JPY'), balance('CLBD', 1_000, 'JPY')], entries }))).toEqual([]);
    expect(statementIntegrityFindings(statement({ currency: null, balances: [balance('OPBD', 0, 'JPY'), balance('CLBD', 999, 'JPY')], entries }))[0]?.detail).toBe(
      "the opening balance (OPBD) 0 JPY and the booked entries' net 1,000 JPY make 1,000 JPY, but the closing balance (CLBD) is 999 JPY: -1 JPY unaccounted for",
    );
  });

  it('adds exactly past the safe-integer range', () => {
    const big = 999_999_999_999_999;
    const entries = Array.from({ length: 20 }, () => booked(big));
    expect(codes(statement({ balances: [balance('OPBD', -big), balance('CLBD', big)], entries }))).toEqual(['balance_mismatch']);
    expect(statementIntegrityFindings(statement({ balances: [balance('OPBD', -big), balance('CLBD', big)], entries }))[0]?.detail).toContain(
      "the booked entries' net £199,999,999,999,999.80 make £189,999,999,999,999.81",
    );
  });

  it('holds for any entries whose total the closing balance carries (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), fc.array(fc.tuple(fc.integer({ min: 1, max: 1e12 }), fc.boolean()), { maxLength: 30 }), (opening, moves) => {
        const entries = moves.map(([amount, credit]) => booked(amount, credit ? 'credit' : 'debit'));
        const closing = moves.reduce((sum, [amount, credit]) => sum + (credit ? amount : -amount), opening);
        expect(codes(statement({ balances: [balance('OPBD', opening), balance('CLBD', closing)], entries }))).toEqual([]);
        expect(codes(statement({ balances: [balance('OPBD', opening), balance('CLBD', closing + 1)], entries }))).toEqual(['balance_mismatch']);
      }),
    );
  });
});

describe('no balances', () => {
  it('is a finding for a camt.053 statement, on any page', () => {
    expect(statementIntegrityFindings(statement({ balances: [] }))).toEqual([
      { code: 'no_balances', detail: 'the statement has no balances (Bal): its entries cannot be checked against an opening and a closing balance' },
    ]);
    expect(codes(statement({ balances: [], page: { number: 3, last: false } }))).toEqual(['no_balances']);
  });

  it('is not one for a camt.054 notification or the CSV layout, which carry none', () => {
    expect(codes(statement({ format: 'camt.054', balances: [], entries: [booked(1)] }))).toEqual([]);
    expect(codes(statement({ format: 'csv', balances: [], entries: [booked(1)] }))).toEqual([]);
  });
});

describe('TxsSummry', () => {
  const summary = (fields: Partial<StatementSummary>): StatementSummary => ({ entries: null, credits: null, debits: null, ...fields });
  const entries = () => [booked(10_00), booked(4_00, 'debit'), booked(1_00, 'debit', { reversal: true })];
  const balanced = [balance('OPBD', 0), balance('CLBD', 5_00)];

  it('finds nothing when the totals are the entries', () => {
    const totals = summary({ entries: { count: 3, sum: 15_00, net: 5_00 }, credits: { count: 1, sum: 10_00 }, debits: { count: 2, sum: 5_00 } });
    expect(statementIntegrityFindings(statement({ balances: balanced, summary: totals, entries: entries() }))).toEqual([]);
  });

  it('finds each count, sum and net that differs, with its figures', () => {
    const totals = summary({ entries: { count: 4, sum: 16_00, net: -5_00 }, credits: { count: 2, sum: 10_00 }, debits: { count: 2, sum: 6_00 } });
    expect(statementIntegrityFindings(statement({ balances: balanced, summary: totals, entries: entries() }))).toEqual([
      { code: 'summary_count_mismatch', detail: 'TxsSummry counts 4 entries (TtlNtries); the statement has 3' },
      { code: 'summary_sum_mismatch', detail: "TxsSummry sums the entries (TtlNtries) to £16.00; the statement's add up to £15.00" },
      { code: 'summary_count_mismatch', detail: 'TxsSummry counts 2 credit entries (TtlCdtNtries); the statement has 1' },
      { code: 'summary_sum_mismatch', detail: "TxsSummry sums the debit entries (TtlDbtNtries) to £6.00; the statement's add up to £5.00" },
      { code: 'summary_net_mismatch', detail: "TxsSummry gives the entries' net as -£5.00; the statement's net is £5.00" },
    ]);
  });

  it('checks only what the bank gave', () => {
    const totals = summary({ entries: { count: null, sum: null, net: 5_00 }, debits: { count: 2, sum: null } });
    expect(codes(statement({ balances: balanced, summary: totals, entries: entries() }))).toEqual([]);
  });

  it('counts a batch split into parts as the one entry the bank booked, in the direction of its total', () => {
    const parts = (lump: number, moves: Array<[number, 'credit' | 'debit']>) =>
      moves.map(([amount, direction], index) => booked(amount, direction, { batch: { amount: lump, part: index + 1, parts: moves.length } }));
    const split = [
      ...parts(30_00, [
        [10_00, 'credit'],
        [20_00, 'credit'],
      ]),
      booked(5_00, 'debit'),
      ...parts(2_00, [
        [3_00, 'credit'],
        [5_00, 'debit'],
      ]),
    ];
    const totals = summary({ entries: { count: 3, sum: 37_00, net: 23_00 }, credits: { count: 1, sum: 30_00 }, debits: { count: 2, sum: 7_00 } });
    expect(statementIntegrityFindings(statement({ balances: [balance('OPBD', 0), balance('CLBD', 23_00)], summary: totals, entries: split }))).toEqual([]);
  });

  it('is checked on a whole statement only', () => {
    const totals = summary({ entries: { count: 99, sum: 1, net: 1 } });
    expect(codes(statement({ balances: [], summary: totals, entries: entries(), page: { number: 1, last: false } }))).toEqual(['no_balances']);
  });
});

describe('sequenceGap', () => {
  it('says nothing when the number follows on, or when either is unknown', () => {
    expect(sequenceGap('39', '40')).toBeNull();
    expect(sequenceGap('0099', '100')).toBeNull();
    expect(sequenceGap(null, '40')).toBeNull();
    expect(sequenceGap('39', null)).toBeNull();
    expect(sequenceGap(null, null)).toBeNull();
  });

  it('describes a gap', () => {
    expect(sequenceGap('39', '41')).toBe('electronic sequence 41 follows 39: 40 is missing');
    expect(sequenceGap('39', '43')).toBe('electronic sequence 43 follows 39: 40 to 42 (3 statements) are missing');
    expect(sequenceGap('99999999999999999998', '100000000000000000001')).toBe(
      'electronic sequence 100000000000000000001 follows 99999999999999999998: 99999999999999999999 to 100000000000000000000 (2 statements) are missing',
    );
  });

  it('describes a repeat and a step back', () => {
    expect(sequenceGap('40', '040')).toBe("electronic sequence 40 repeats the previous statement's");
    expect(sequenceGap('40', '7')).toBe('electronic sequence 7 follows 40: it goes back (a statement sent again, or the bank restarted its numbering)');
  });

  it('names another sequence when asked', () => {
    expect(sequenceGap('1', '3', 'legal sequence')).toBe('legal sequence 3 follows 1: 2 is missing');
  });

  it('does not judge numbers that are not plain digits', () => {
    expect(sequenceGap('2026/40', '2026/42')).toBeNull();
    expect(sequenceGap('-1', '1')).toBeNull();
    expect(sequenceGap('1.5', '3')).toBeNull();
  });
});

describe('creditsTotalOrProblem', () => {
  it('adds credits exactly up to the largest amount carried, and refuses one minor unit more, naming the total', () => {
    expect(creditsTotalOrProblem([], 'GBP')).toEqual({ total: 0, problem: null });
    expect(creditsTotalOrProblem([999_999_999_999_998, 1], 'GBP')).toEqual({ total: 999_999_999_999_999, problem: null });
    expect(creditsTotalOrProblem([999_999_999_999_999, 1], 'GBP')).toEqual({
      total: null,
      problem: "the statement's credits add up to £10,000,000,000,000.00, more than £9,999,999,999,999.99, the most one statement may carry",
    });
    // Ten of the largest: past 2^53, still exact in the message.
    expect(creditsTotalOrProblem(Array(10).fill(999_999_999_999_999), 'GBP').problem).toContain('£99,999,999,999,999.90');
  });
});
