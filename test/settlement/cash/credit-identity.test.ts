import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import {
  creditVerdict,
  entryKind,
  KnownCreditIndex,
  reversedCredit,
  RETURN_SUB_FAMILIES,
  sameReversal,
  type IncomingCredit,
  type KnownCredit,
  type RecordedReversal,
} from '../../../src/settlement/cash/credit-identity.ts';

const DAY = '2026-11-27';

function known(overrides: Partial<KnownCredit> & { id: string; amount: number }): KnownCredit {
  return {
    bookingDate: DAY,
    accountServicerReference: null,
    entryReference: null,
    transactionReferences: [],
    remittanceInformation: null,
    batch: null,
    notifiedOnly: false,
    reversed: false,
    ...overrides,
  };
}

function incoming(overrides: Partial<IncomingCredit> & { amount: number }): IncomingCredit {
  return {
    bookingDate: DAY,
    accountServicerReference: null,
    entryReference: null,
    transactionReferences: [],
    remittanceInformation: null,
    batch: null,
    currency: 'GBP',
    ...overrides,
  };
}

const none = new Map<string, string>();

describe('entryKind', () => {
  const plain = { direction: 'credit' as const, reversal: false, returnReason: null, bankTransactionCode: null, problem: null };

  it('tells a credit, a debit, and an unusable entry apart', () => {
    expect(entryKind(plain)).toBe('credit');
    expect(entryKind({ ...plain, direction: 'debit' })).toBe('debit');
    expect(entryKind({ ...plain, problem: "the entry's amount is zero" })).toBe('unusable');
    expect(entryKind({ ...plain, direction: 'debit', reversal: true, problem: 'x' })).toBe('unusable');
  });

  it('reads RvslInd both ways: a debit reversing our credit, a credit bringing back our debit', () => {
    expect(entryKind({ ...plain, direction: 'debit', reversal: true })).toBe('credit_reversal');
    expect(entryKind({ ...plain, direction: 'credit', reversal: true })).toBe('debit_return');
  });

  it('reads a return without RvslInd: RtrInf, or a return sub-family of the bank transaction code', () => {
    expect(entryKind({ ...plain, direction: 'debit', returnReason: 'AC04' })).toBe('credit_reversal');
    expect(entryKind({ ...plain, direction: 'debit', returnReason: '' })).toBe('credit_reversal');
    for (const subFamily of RETURN_SUB_FAMILIES) {
      const code = { domain: 'PMNT', family: 'RCDT', subFamily, proprietary: null };
      expect(entryKind({ ...plain, direction: 'debit', bankTransactionCode: code })).toBe('credit_reversal');
      expect(entryKind({ ...plain, direction: 'credit', bankTransactionCode: code })).toBe('debit_return');
    }
    expect(entryKind({ ...plain, bankTransactionCode: { domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT', proprietary: null } })).toBe('credit');
  });
});

describe('creditVerdict: one credit across the files that report it', () => {
  it('a camt.053 entry with the AcctSvcrRef of a camt.054 notice supersedes it', () => {
    const notice = known({ id: 'c1', amount: 410_691, accountServicerReference: 'BANKREF-7781', notifiedOnly: true });
    expect(creditVerdict(incoming({ amount: 410_691, accountServicerReference: 'BANKREF-7781' }), true, [notice], none, 'k')).toEqual({
      outcome: 'superseded',
      creditIds: ['c1'],
      detail: 'known by its account servicer reference BANKREF-7781',
    });
    // The same notice sent again, or a booked credit booked again, is already known.
    expect(creditVerdict(incoming({ amount: 410_691, accountServicerReference: 'BANKREF-7781' }), false, [notice], none, 'k').outcome).toBe('already_known');
    expect(creditVerdict(incoming({ amount: 410_691, accountServicerReference: 'BANKREF-7781' }), true, [{ ...notice, notifiedOnly: false }], none, 'k').outcome).toBe(
      'already_known',
    );
  });

  it('one file naming the credit by NtryRef and the other by AcctSvcrRef is one credit', () => {
    const first = known({ id: 'c1', amount: 1_066_202, entryReference: '2026112700042' });
    expect(creditVerdict(incoming({ amount: 1_066_202, accountServicerReference: '2026112700042' }), true, [first], none, 'k')).toMatchObject({
      outcome: 'already_known',
      creditIds: ['c1'],
    });
  });

  it('a transaction reference (EndToEndId) shared is one credit', () => {
    const first = known({ id: 'c1', amount: 500, transactionReferences: ['E2E-NORTHWIND-1127'] });
    expect(creditVerdict(incoming({ amount: 500, transactionReferences: ['E2E-NORTHWIND-1127'] }), true, [first], none, 'k')).toMatchObject({ outcome: 'already_known' });
  });

  it('a reused NtryRef on another day is a new credit (banks number entries afresh)', () => {
    const yesterday = known({ id: 'c1', amount: 826_079, entryReference: '1', bookingDate: '2026-11-26' });
    expect(creditVerdict(incoming({ amount: 826_079, entryReference: '1' }), true, [yesterday], none, 'k')).toEqual({ outcome: 'new' });
  });

  it('a short NtryRef alone needs the same amount and no contradicting payer text', () => {
    const first = known({ id: 'c1', amount: 826_079, entryReference: '1', remittanceInformation: 'SDR261127P00000012' });
    expect(creditVerdict(incoming({ amount: 826_079, entryReference: '1', remittanceInformation: 'sdr 261127 p00000012' }), true, [first], none, 'k').outcome).toBe(
      'already_known',
    );
    expect(creditVerdict(incoming({ amount: 826_079, entryReference: '1', remittanceInformation: 'SDR261127P00000013' }), true, [first], none, 'k').outcome).toBe('new');
    // A different amount under a counter reference is another credit, not a conflict.
    expect(creditVerdict(incoming({ amount: 100, entryReference: '1' }), true, [first], none, 'k').outcome).toBe('new');
  });

  it('a distinctive reference known with another amount on the same day is a conflict, never a silent keep or drop', () => {
    const first = known({ id: 'c1', amount: 410_691, accountServicerReference: 'BANKREF-7781' });
    expect(creditVerdict(incoming({ amount: 420_691, accountServicerReference: 'BANKREF-7781' }), true, [first], none, 'k')).toEqual({
      outcome: 'conflicting',
      creditIds: ['c1'],
      detail: 'its account servicer reference BANKREF-7781 is already on the account with amount £4,106.91, not £4,206.91',
    });
  });

  it('a lump sum is the batch whose parts add up to it, in either order', () => {
    const parts = [
      known({ id: 'p1', amount: 600_000, accountServicerReference: 'BATCH-20261127', batch: { amount: 1_066_202, part: 1, parts: 2 }, notifiedOnly: true }),
      known({ id: 'p2', amount: 466_202, accountServicerReference: 'BATCH-20261127', batch: { amount: 1_066_202, part: 2, parts: 2 }, notifiedOnly: true }),
    ];
    expect(creditVerdict(incoming({ amount: 1_066_202, accountServicerReference: 'BATCH-20261127' }), true, parts, none, 'k')).toMatchObject({
      outcome: 'superseded',
      creditIds: ['p1', 'p2'],
    });

    const lump = known({ id: 'l1', amount: 1_066_202, accountServicerReference: 'BATCH-20261127' });
    const claimed = new Map<string, string>();
    for (const [part, amount] of [
      [1, 600_000],
      [2, 466_202],
    ] as const) {
      const verdict = creditVerdict(
        incoming({ amount, accountServicerReference: 'BATCH-20261127', batch: { amount: 1_066_202, part, parts: 2 } }),
        false,
        [lump],
        claimed,
        'batch-1',
      );
      expect(verdict).toMatchObject({ outcome: 'already_known', creditIds: ['l1'] });
      claimed.set('l1', 'batch-1');
    }
  });

  it('a batch whose known parts do not add up to the lump sum is a conflict', () => {
    const parts = [known({ id: 'p1', amount: 600_000, accountServicerReference: 'BATCH-20261127', batch: { amount: 1_066_202, part: 1, parts: 2 } })];
    expect(creditVerdict(incoming({ amount: 1_066_202, accountServicerReference: 'BATCH-20261127' }), true, parts, none, 'k').outcome).toBe('conflicting');
  });

  it('each known credit answers for one entry of an import: two entries reusing one AcctSvcrRef are two credits', () => {
    const first = known({ id: 'c1', amount: 500, accountServicerReference: 'DUPREF-000001' });
    const claimed = new Map([['c1', 'entry-0']]);
    expect(creditVerdict(incoming({ amount: 500, accountServicerReference: 'DUPREF-000001' }), true, [first], claimed, 'entry-1')).toEqual({ outcome: 'new' });
  });

  it('never calls an entry known without a reference both share, whatever else agrees', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.string({ minLength: 6 }), fc.string({ minLength: 6 }), (amount, a, b) => {
        fc.pre(a !== b);
        const verdict = creditVerdict(incoming({ amount, accountServicerReference: a }), true, [known({ id: 'c', amount, accountServicerReference: b })], none, 'k');
        expect(verdict.outcome).toBe('new');
      }),
    );
  });
});

describe('reversedCredit: which credit a reversal takes back', () => {
  const reversal = (overrides: Partial<IncomingCredit> = {}) => incoming({ amount: 410_691, bookingDate: '2026-11-30', ...overrides });

  it('the one credit sharing a distinctive reference', () => {
    const candidates = [
      known({ id: 'c1', amount: 410_691, accountServicerReference: 'BANKREF-7781' }),
      known({ id: 'c2', amount: 410_691, accountServicerReference: 'BANKREF-9999' }),
    ];
    expect(reversedCredit(reversal({ accountServicerReference: 'BANKREF-7781' }), candidates).creditId).toBe('c1');
    expect(
      reversedCredit(reversal({ transactionReferences: ['BANKREF-9999'] }), [known({ id: 'c3', amount: 410_691, transactionReferences: ['BANKREF-9999'] }), candidates[0]!])
        .creditId,
    ).toBe('c3');
  });

  it('else the one with the same payer text, else the only one of that amount', () => {
    const candidates = [
      known({ id: 'c1', amount: 410_691, remittanceInformation: 'SDR261127P00000012' }),
      known({ id: 'c2', amount: 410_691, remittanceInformation: 'SDR261127P00000013' }),
    ];
    expect(reversedCredit(reversal({ remittanceInformation: 'SDR 261127 P00000013' }), candidates).creditId).toBe('c2');
    expect(reversedCredit(reversal(), [candidates[0]!])).toEqual({ creditId: 'c1', detail: 'reverses the only credit of this amount on or before its booking date' });
  });

  it('leaves it to a person when several could be the one, or none', () => {
    const twins = [known({ id: 'c1', amount: 410_691 }), known({ id: 'c2', amount: 410_691 })];
    expect(reversedCredit(reversal(), twins)).toEqual({ creditId: null, detail: '2 credits of this amount could be the one reversed' });
    expect(reversedCredit(reversal(), [])).toEqual({ creditId: null, detail: 'no credit of this amount on or before its booking date is left to reverse' });
  });

  it('never takes back a credit of another amount, booked after it, or already reversed', () => {
    const candidates = [
      known({ id: 'other-amount', amount: 410_692, accountServicerReference: 'BANKREF-7781' }),
      known({ id: 'later', amount: 410_691, accountServicerReference: 'BANKREF-7781', bookingDate: '2026-12-01' }),
      known({ id: 'gone', amount: 410_691, accountServicerReference: 'BANKREF-7781', reversed: true }),
    ];
    expect(reversedCredit(reversal({ accountServicerReference: 'BANKREF-7781' }), candidates).creditId).toBeNull();
  });
});

describe('KnownCreditIndex: only the credits an entry could be', () => {
  it('finds the same-day credits sharing any reference, each once, and nothing else', () => {
    const a = known({ id: 'a', amount: 1, accountServicerReference: 'REF-AAAAAA', entryReference: '1' });
    const b = known({ id: 'b', amount: 2, transactionReferences: ['E2E-B'], entryReference: '1' });
    const otherDay = known({ id: 'c', amount: 1, accountServicerReference: 'REF-AAAAAA', bookingDate: '2026-11-26' });
    const index = new KnownCreditIndex([a, b, otherDay]);
    expect(index.candidatesFor(incoming({ amount: 1, accountServicerReference: 'REF-AAAAAA', entryReference: '1' })).map((c) => c.id)).toEqual(['a', 'b']);
    expect(index.candidatesFor(incoming({ amount: 1, entryReference: 'E2E-B' })).map((c) => c.id)).toEqual(['b']);
    expect(index.candidatesFor(incoming({ amount: 1, accountServicerReference: 'NOTHING' }))).toEqual([]);
    expect(index.candidatesFor(incoming({ amount: 1 }))).toEqual([]);
  });

  it('gives creditVerdict the same answer as comparing with every known credit', () => {
    const reference = fc.constantFrom('1', '2', 'REF-AAAAAA', 'REF-BBBBBB', null);
    const day = fc.constantFrom(DAY, '2026-11-26');
    const record = fc.record({ amount: fc.constantFrom(100, 200, 300), bookingDate: day, accountServicerReference: reference, entryReference: reference });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), record, (knownRecords, entry) => {
        const credits = knownRecords.map((r, i) => known({ id: `k${i}`, ...r }));
        const incomingEntry = incoming(entry);
        const indexed = creditVerdict(incomingEntry, true, new KnownCreditIndex(credits).candidatesFor(incomingEntry), none, 'k');
        expect(indexed).toEqual(creditVerdict(incomingEntry, true, credits, none, 'k'));
      }),
    );
  });
});

describe('sameReversal: one reversal across the files that report it', () => {
  const recorded = (overrides: Partial<RecordedReversal> = {}): RecordedReversal => ({
    id: 'r1',
    creditId: 'c1',
    format: 'camt.054',
    bookingDate: DAY,
    amount: 410_691,
    accountServicerReference: 'RVSL-REF-0001',
    entryReference: null,
    ...overrides,
  });
  const entry = (overrides: Partial<IncomingCredit> = {}) => ({ amount: 410_691, bookingDate: DAY, accountServicerReference: null, entryReference: null, ...overrides });

  it('is the recorded one sharing a distinctive reference on the same day, for the same amount', () => {
    expect(sameReversal(entry({ entryReference: 'RVSL-REF-0001' }), 'camt.053', [recorded()])?.id).toBe('r1');
    expect(sameReversal(entry({ accountServicerReference: 'RVSL-REF-0001', amount: 1 }), 'camt.053', [recorded()])).toBeUndefined();
    expect(sameReversal(entry({ accountServicerReference: 'RVSL-REF-0001', bookingDate: '2026-11-28' }), 'camt.053', [recorded()])).toBeUndefined();
    // A distinctive reference of its own that no recorded one shares: another reversal.
    expect(sameReversal(entry({ accountServicerReference: 'RVSL-REF-0002' }), 'camt.053', [recorded()])).toBeUndefined();
  });

  it('without distinctive references, is a notice recorded from the other kind of file, never one of the same kind', () => {
    const bare = recorded({ accountServicerReference: null, entryReference: '1' });
    expect(sameReversal(entry({ entryReference: '1' }), 'camt.053', [bare])?.id).toBe('r1');
    expect(sameReversal(entry({ entryReference: '1' }), 'camt.054', [bare])).toBeUndefined();
    expect(sameReversal(entry(), 'camt.053', [recorded({ format: 'camt.053', accountServicerReference: null })])).toBeUndefined();
  });
});
