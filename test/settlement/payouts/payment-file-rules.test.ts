import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { parse } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';
import { currencyExponent } from '../../../src/platform/money/currency.ts';
import { formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import { controlSum, fitsOnePain001, isoLatinText, pain001TotalsFit, renderPain001File, type Pain001DebtorAccount } from '../../../src/settlement/payouts/pain001-file.ts';
import {
  paymentFileBatches,
  paymentFileMessageId,
  paymentFileName,
  payoutFileColumns,
  renderPayoutFile,
  type PayoutFileRow,
} from '../../../src/settlement/payouts/payout-file.ts';
import { xsdErrors } from '../../support/xsd.ts';

// The payment file's pure parts: its MsgId and names, how payouts are spread over files so that every
// control sum fits, its CSV rendering, and every pain.001 it renders held to the official
// pain.001.001.09 schema (test/fixtures/iso20022): several currencies, the largest amounts, awkward names.

const FILE_ID = '7c1e09a2-5b2c-4d11-8e42-3c5f7a9b1d01';

let counter = 0;
function payout(overrides: Partial<PayoutFileRow> = {}): PayoutFileRow {
  counter += 1;
  return {
    id: crypto.randomUUID(),
    reference: `PO261103${counter.toString(16).toUpperCase().padStart(10, '0')}`,
    biller: 'Acme Lending Ltd',
    currency: 'GBP',
    amount: 10_000,
    account_holder_name: 'Acme Lending Ltd',
    sort_code: '60-16-13',
    account_number: '31926819',
    payout_date: '2026-11-03',
    status: 'pending',
    ...overrides,
  };
}

const debtor = (currency: string): Pain001DebtorAccount => ({
  currency,
  sort_code: '04-00-04',
  account_number: '41234567',
  account_holder_name: 'Salary Deductions Collections Ltd',
});

function render(payouts: PayoutFileRow[], overrides: { messageId?: string; requestedExecutionDate?: string } = {}): string {
  const currencies = [...new Set(payouts.map((p) => p.currency))];
  return renderPain001File({
    messageId: overrides.messageId ?? paymentFileMessageId('2026-11-03', 1, FILE_ID),
    createdAt: new Date('2026-11-03T07:05:00.456Z'),
    requestedExecutionDate: overrides.requestedExecutionDate ?? '2026-11-03',
    payouts,
    debtorAccounts: currencies.map(debtor),
  });
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, isArray: (name) => ['PmtInf', 'CdtTrfTxInf'].includes(name) });
const read = (xml: string) => parser.parse(xml).Document.CstmrCdtTrfInitn;

describe('paymentFileMessageId', () => {
  it('is SDPO, the date as YYMMDD, the file number and eight hex digits of the file id, within Max35Text', () => {
    expect(paymentFileMessageId('2026-11-03', 1, FILE_ID)).toBe('SDPO261103-01-7C1E09A2');
    expect(paymentFileMessageId('2026-11-03', 12, FILE_ID)).toBe('SDPO261103-12-7C1E09A2');
    expect(paymentFileMessageId('2026-11-03', 123, FILE_ID)).toBe('SDPO261103-123-7C1E09A2');
    expect(paymentFileMessageId('2026-11-03', 999_999_999, FILE_ID).length).toBeLessThanOrEqual(35);
  });

  it('differs between files: another number, another date or another file id', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), fc.integer({ min: 1, max: 500 }), (a, b, sequence) => {
        fc.pre(a.replaceAll('-', '').slice(0, 8) !== b.replaceAll('-', '').slice(0, 8));
        expect(paymentFileMessageId('2026-11-03', sequence, a)).not.toBe(paymentFileMessageId('2026-11-03', sequence, b));
        expect(paymentFileMessageId('2026-11-03', sequence, a)).not.toBe(paymentFileMessageId('2026-11-03', sequence + 1, a));
        expect(paymentFileMessageId('2026-11-03', sequence, a)).not.toBe(paymentFileMessageId('2026-11-04', sequence, a));
        expect(paymentFileMessageId('2026-11-03', sequence, a)).toMatch(/^SDPO\d{6}-\d{2,}-[0-9A-F]{8}$/);
      }),
    );
  });

  it('has no number 0 or below: those are not files a MsgId is made for', () => {
    expect(() => paymentFileMessageId('2026-11-03', 0, FILE_ID)).toThrow(RangeError);
    expect(() => paymentFileMessageId('2026-11-03', 1.5, FILE_ID)).toThrow(RangeError);
  });
});

describe('paymentFileName', () => {
  it('names the date and the file number, in each format', () => {
    expect(paymentFileName('2026-11-03', 1, 'csv')).toBe('payouts-2026-11-03-01.csv');
    expect(paymentFileName('2026-11-03', 2, 'pain.001')).toBe('payouts-2026-11-03-02.pain.001.xml');
    expect(paymentFileName('2026-11-03', 100, 'pain.001')).toBe('payouts-2026-11-03-100.pain.001.xml');
  });
});

describe('what one pain.001 message can carry', () => {
  it('takes any single payout of a safe amount, in any currency', () => {
    for (const currency of ['GBP', 'JPY', 'BHD', 'CLF']) {
      expect(fitsOnePain001([{ amount: Number.MAX_SAFE_INTEGER, currency }])).toBe(true);
    }
  });

  it('counts every control sum: each currency, and the group over all at the largest exponent', () => {
    const eighteen = 999_999_999_999_999_999n; // 18 nines
    expect(pain001TotalsFit(new Map([['GBP', eighteen]]))).toBe(true);
    expect(pain001TotalsFit(new Map([['GBP', eighteen + 1n]]))).toBe(false);
    // Each fits alone; together at BHD's three decimals the GBP total gains a digit.
    expect(pain001TotalsFit(new Map([['GBP', 10n ** 16n]]))).toBe(true);
    expect(
      pain001TotalsFit(
        new Map([
          ['GBP', 10n ** 16n],
          ['BHD', 1n],
        ]),
      ),
    ).toBe(true);
    expect(
      pain001TotalsFit(
        new Map([
          ['GBP', 10n ** 17n],
          ['BHD', 1n],
        ]),
      ),
    ).toBe(false);
    expect(
      pain001TotalsFit(
        new Map([
          ['JPY', 10n ** 17n],
          ['CLF', 1n],
        ]),
      ),
    ).toBe(false);
  });

  it('agrees with the digits controlSum writes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ amount: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), currency: fc.constantFrom('GBP', 'EUR', 'JPY', 'BHD', 'CLF') }), {
          minLength: 1,
          maxLength: 400,
        }),
        (payouts) => {
          const sums = [
            controlSum(payouts),
            ...['GBP', 'EUR', 'JPY', 'BHD', 'CLF']
              .map((c) => payouts.filter((p) => p.currency === c))
              .filter((l) => l.length > 0)
              .map(controlSum),
          ];
          // Written digits, leading zeros of "0.05" aside.
          const written = (text: string) => {
            const [whole = '', fraction = ''] = text.split('.');
            return Math.max(1, whole.replace(/^0+/, '').length + fraction.length);
          };
          expect(fitsOnePain001(payouts)).toBe(sums.every((sum) => written(sum) <= 18));
        },
      ),
    );
  });
});

describe('paymentFileBatches', () => {
  const amountArb = fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.constant(Number.MAX_SAFE_INTEGER));
  const payoutsArb = fc.array(fc.record({ id: fc.uuid(), amount: amountArb, currency: fc.constantFrom('GBP', 'EUR', 'JPY', 'BHD', 'CLF') }), { maxLength: 300 });

  it('puts every payout in exactly one file, in order, each file within the limits, a new one only when needed', () => {
    fc.assert(
      fc.property(payoutsArb, (payouts) => {
        const batches = paymentFileBatches(payouts);
        expect(batches.flat()).toEqual(payouts);
        for (const [index, batch] of batches.entries()) {
          expect(batch.length).toBeGreaterThan(0);
          expect(fitsOnePain001(batch)).toBe(true);
          const next = batches[index + 1];
          if (next) expect(fitsOnePain001([...batch, next[0]!])).toBe(false);
        }
      }),
    );
  });

  it('keeps a day of ordinary payouts in one file', () => {
    const payouts = Array.from({ length: 5000 }, () => payout({ amount: 999_999_999_999_999 }));
    // 5,000 payouts of the largest payment amount: a control sum of 22 digits does not fit.
    expect(paymentFileBatches(payouts).length).toBeGreaterThan(1);
    const ordinary = Array.from({ length: 5000 }, (_, i) => payout({ amount: 1_000 + i, currency: i % 2 === 0 ? 'GBP' : 'EUR' }));
    expect(paymentFileBatches(ordinary)).toEqual([ordinary]);
    expect(paymentFileBatches([])).toEqual([]);
  });

  it('refuses an amount that is no transfer', () => {
    expect(() => paymentFileBatches([payout({ amount: 0 })])).toThrow(RangeError);
    expect(() => paymentFileBatches([payout({ amount: 2 ** 60 })])).toThrow(RangeError);
  });
});

describe('the CSV rendering', () => {
  it("lists each payout once under the file's MsgId and execution date, money as decimals, formulas neutralised", () => {
    const rows = [
      payout({ amount: 12_345, biller: '=HYPERLINK("x")', account_holder_name: 'Zoë & Co' }),
      payout({ amount: 500, currency: 'JPY' }),
      payout({ amount: 1_234, currency: 'BHD' }),
    ];
    const csv = renderPayoutFile({ messageId: 'SDPO261107-02-7C1E09A2', requestedExecutionDate: '2026-11-09' }, rows);
    expect(csv.split('\n')[0]).toBe(payoutFileColumns.join(','));
    const parsed = parse(csv, { columns: true }) as Array<Record<string, string>>;
    expect(parsed.map((row) => [row.payout_id, row.amount, row.message_id, row.requested_execution_date])).toEqual([
      [rows[0]!.id, '123.45', 'SDPO261107-02-7C1E09A2', '2026-11-09'],
      [rows[1]!.id, '500', 'SDPO261107-02-7C1E09A2', '2026-11-09'],
      [rows[2]!.id, '1.234', 'SDPO261107-02-7C1E09A2', '2026-11-09'],
    ]);
    expect(parsed[0]!.biller).toBe('\'=HYPERLINK("x")');
    expect(parsed[0]!.account_holder_name).toBe('Zoë & Co');
  });
});

// Validation with libxml2 compiled to WebAssembly takes a few hundred milliseconds a document on a busy machine.
describe('the pain.001 rendering against the pain.001.001.09 schema', { timeout: 120_000 }, () => {
  it('is valid for one ordinary payout, with the requested execution date and the given MsgId', async () => {
    const xml = render([payout()], { requestedExecutionDate: '2026-11-09' });
    expect(await xsdErrors(xml, 'pain.001.001.09')).toEqual([]);
    const message = read(xml);
    expect(message.GrpHdr.MsgId).toBe('SDPO261103-01-7C1E09A2');
    expect(message.GrpHdr.CreDtTm).toBe('2026-11-03T07:05:00Z');
    expect(message.PmtInf[0].ReqdExctnDt.Dt).toBe('2026-11-09');
  });

  it('is valid with several currencies of different decimals, one block each from its own debtor account', async () => {
    const currencies = ['GBP', 'EUR', 'USD', 'JPY', 'BHD', 'CLF', 'CHF'];
    const payouts = currencies.flatMap((currency, i) => [payout({ currency, amount: 1 + i }), payout({ currency, amount: 987_654_321 + i })]);
    const xml = render(payouts);
    expect(await xsdErrors(xml, 'pain.001.001.09')).toEqual([]);
    const message = read(xml);
    expect(message.PmtInf.map((block: { DbtrAcct: { Ccy: string } }) => block.DbtrAcct.Ccy)).toEqual([...currencies].sort());
    expect(message.GrpHdr.NbOfTxs).toBe(String(payouts.length));
    expect(message.GrpHdr.CtrlSum).toBe(controlSum(payouts));
    for (const block of message.PmtInf) {
      for (const transfer of block.CdtTrfTxInf) {
        const amount = transfer.Amt.InstdAmt['#text'] as string;
        const decimals = amount.includes('.') ? amount.split('.')[1]!.length : 0;
        expect(decimals).toBe(currencyExponent(block.DbtrAcct.Ccy));
      }
    }
  });

  it('is valid at the largest amounts: each currency at the largest safe amount, and totals of exactly 18 digits', async () => {
    const largest = ['GBP', 'JPY', 'BHD', 'CLF'].map((currency) => payout({ currency, amount: Number.MAX_SAFE_INTEGER }));
    for (const one of largest) expect(await xsdErrors(render([one]), 'pain.001.001.09'), one.currency).toEqual([]);
    // Payouts of the largest amount, more than one file takes (111 of them make 18 digits).
    const many = Array.from({ length: 250 }, () => payout({ amount: Number.MAX_SAFE_INTEGER }));
    const batches = paymentFileBatches(many);
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) {
      const xml = render(batch);
      expect(await xsdErrors(xml, 'pain.001.001.09')).toEqual([]);
      expect(read(xml).GrpHdr.CtrlSum.replace('.', '').length).toBeLessThanOrEqual(18);
    }
    expect(formatMinorUnits(Number.MAX_SAFE_INTEGER, 'GBP')).toBe('90071992547409.91');
    // Mixed at the largest: each batch is still valid.
    const mixed = [...largest, ...largest, ...largest].map((p) => ({ ...p, id: crypto.randomUUID() }));
    for (const batch of paymentFileBatches(mixed)) expect(await xsdErrors(render(batch), 'pain.001.001.09')).toEqual([]);
  });

  it('refuses to render totals past 18 digits rather than write an invalid file', () => {
    const many = Array.from({ length: 200 }, () => payout({ amount: Number.MAX_SAFE_INTEGER }));
    expect(() => render(many)).toThrow(/18 digits/);
  });

  it('is valid with names a bank would choke on, each reduced to what banks accept', async () => {
    const names = [
      'Tom & Jerry <Ltd> "Quoted"',
      "O'Brien – Finance — Ltd",
      'Société Générale Øresund Straße Łódź',
      'Ŵyn Ŷnys Cymru Cyf',
      'Işık Dağı Ödeme A.Ş.',
      '北京银行 London Branch',
      'Emoji 🚀 Lending 💷 Ltd',
      'Tab\tNew\nLine\rReturn',
      'Null\u0000Byte\u0007Bell',
      ']]> CDATA end <!-- comment --> &amp;',
      'x'.repeat(300),
      '  spaces   everywhere  ',
      'Ｆｕｌｌｗｉｄｔｈ Ｌｔｄ',
      'Right\u202eto\u202cleft',
    ];
    const payouts = names.map((account_holder_name, i) => payout({ account_holder_name, currency: i % 2 === 0 ? 'GBP' : 'EUR' }));
    const xml = render(payouts);
    expect(await xsdErrors(xml, 'pain.001.001.09')).toEqual([]);
    const creditors: string[] = read(xml).PmtInf.flatMap((block: { CdtTrfTxInf: Array<{ Cdtr: { Nm: string } }> }) => block.CdtTrfTxInf.map((t) => t.Cdtr.Nm));
    expect(creditors).toHaveLength(names.length);
    for (const name of creditors) {
      expect(name).toMatch(/^[A-Za-z0-9/\-?:().,'+ ]{1,70}$/);
    }
    expect(creditors).toContain(isoLatinText('Tom & Jerry <Ltd> "Quoted"', 70));
  });

  it('is valid for any payouts it agrees to render', async () => {
    const names = fc.string({ unit: 'binary', minLength: 1, maxLength: 160 });
    const payoutArb = fc.record({
      account_holder_name: names,
      currency: fc.constantFrom('GBP', 'EUR', 'JPY', 'BHD', 'CLF'),
      amount: fc.oneof(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(payoutArb, { minLength: 1, maxLength: 20 }), async (drawn) => {
        const payouts = drawn.map((fields) => payout(fields));
        for (const batch of paymentFileBatches(payouts)) {
          let xml: string;
          try {
            xml = render(batch);
          } catch (error) {
            // Only a name with nothing a bank accepts may be refused (naming the payout).
            expect(String(error)).toMatch(/PO261103/);
            continue;
          }
          expect(await xsdErrors(xml, 'pain.001.001.09')).toEqual([]);
        }
      }),
      { numRuns: 15 },
    );
  });

  it('instructs each payout once: a file listing one payout twice is refused', () => {
    const one = payout();
    expect(() => render([one, one])).toThrow(/each payout once/);
  });
});
