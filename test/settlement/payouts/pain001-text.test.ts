import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { XMLParser } from 'fast-xml-parser';
import { formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import { controlSum, isoLatinText, PAIN001_NAME_MAX_LENGTH, renderPain001File, ukBban } from '../../../src/settlement/payouts/pain001-file.ts';
import type { PayoutFileRow } from '../../../src/settlement/payouts/payout-file.ts';

// The rules of the pain.001 file that need no database: what text a bank accepts, exact control sums,
// and the document's shape read back.

const ALLOWED = /^[A-Za-z0-9/\-?:().,'+ ]*$/;

describe('isoLatinText', () => {
  it.each([
    ['Acme Lending Ltd', 'Acme Lending Ltd'],
    ['Crédit Agricole Société', 'Credit Agricole Societe'],
    ['Müller & Söhne GmbH', 'Muller and Sohne GmbH'],
    ['Straße Øresund Æble Łódź', 'Strasse Oresund Aeble Lodz'],
    ['Иванов Παπαδόπουλος', 'Ivanov Papadopoulos'],
    ['O’Brien – Finance', "O'Brien - Finance"],
    ['Tab\tand\nnewline', 'Tab and newline'],
    ['<script>alert("x")</script>', 'script alert( x ) /script'],
    ['  spaced   out  ', 'spaced out'],
    ['email@example.com_ok', 'email example.com ok'],
    ['Ｆｕｌｌｗｉｄｔｈ', 'Fullwidth'],
    ['北京银行', ''],
    ['', ''],
  ])('%j becomes %j', (text, expected) => {
    expect(isoLatinText(text, 140)).toBe(expected);
  });

  it('cuts to the limit without leaving a trailing space', () => {
    const name = `${'A'.repeat(69)} Ltd`;
    expect(isoLatinText(name, PAIN001_NAME_MAX_LENGTH)).toBe('A'.repeat(69));
    expect(isoLatinText('B'.repeat(100), PAIN001_NAME_MAX_LENGTH)).toBe('B'.repeat(70));
  });

  it('always gives text within the allowed set and length, with no leading, trailing or double spaces', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 1, max: 140 }), (text, max) => {
        const result = isoLatinText(text, max);
        expect(result).toMatch(ALLOWED);
        expect(result.length).toBeLessThanOrEqual(max);
        expect(result).toBe(result.trim());
        expect(result).not.toContain('  ');
      }),
    );
  });

  it('leaves text already in the set as it was (but for spacing)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9/\-?:().,'+]([A-Za-z0-9/\-?:().,'+ ]{0,60}[A-Za-z0-9/\-?:().,'+])?$/), (text) => {
        fc.pre(!text.includes('  '));
        expect(isoLatinText(text, 140)).toBe(text);
      }),
    );
  });
});

describe('controlSum', () => {
  it('gives exactly the decimals of a single currency', () => {
    expect(
      controlSum([
        { amount: 12_345, currency: 'GBP' },
        { amount: 5, currency: 'GBP' },
      ]),
    ).toBe('123.50');
    expect(controlSum([{ amount: 1, currency: 'GBP' }])).toBe('0.01');
    expect(controlSum([{ amount: 500, currency: 'JPY' }])).toBe('500');
    expect(controlSum([{ amount: 1_234, currency: 'BHD' }])).toBe('1.234');
  });

  it('sums currencies of different exponents at the largest one', () => {
    expect(
      controlSum([
        { amount: 150, currency: 'GBP' },
        { amount: 5, currency: 'JPY' },
      ]),
    ).toBe('6.50');
    expect(
      controlSum([
        { amount: 150, currency: 'GBP' },
        { amount: 1, currency: 'BHD' },
      ]),
    ).toBe('1.501');
  });

  it('is exact past the safe-integer range of a single amount', () => {
    const big = Number.MAX_SAFE_INTEGER;
    expect(
      controlSum([
        { amount: big, currency: 'GBP' },
        { amount: big, currency: 'GBP' },
      ]),
    ).toBe(formatMinorUnits(BigInt(big) * 2n, 'GBP'));
  });

  it('equals formatMinorUnits of the integer total for one currency', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 10_000_000_000 }), { minLength: 1, maxLength: 30 }), (amounts) => {
        const total = amounts.reduce((sum, amount) => sum + BigInt(amount), 0n);
        expect(controlSum(amounts.map((amount) => ({ amount, currency: 'GBP' })))).toBe(formatMinorUnits(total, 'GBP'));
      }),
    );
  });
});

// The MsgId and the file names are the payment file's: test/settlement/payouts/payment-file-rules.test.ts.
describe('ukBban', () => {
  it('puts the sort code digits before the account number', () => {
    expect(ukBban({ sort_code: '60-16-13', account_number: '01926819' })).toBe('60161301926819');
  });
});

describe('renderPain001File', () => {
  const payout = (overrides: Partial<PayoutFileRow>): PayoutFileRow => ({
    id: crypto.randomUUID(),
    reference: 'PO261103ABCDEF0123',
    biller: 'Biller',
    currency: 'GBP',
    amount: 10_000,
    account_holder_name: 'Acme Lending Ltd',
    sort_code: '60-16-13',
    account_number: '31926819',
    payout_date: '2026-11-03',
    status: 'pending',
    ...overrides,
  });
  const debtor = (currency: string) => ({ currency, sort_code: '04-00-04', account_number: '41234978', account_holder_name: 'Salary Deductions Ltd' });
  const parse = (xml: string) =>
    new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, isArray: (name) => ['PmtInf', 'CdtTrfTxInf'].includes(name) }).parse(xml);

  it('escapes and limits names, and keeps the XML well formed', () => {
    const xml = renderPain001File({
      messageId: 'SDPO261103-01-ABCDEF01',
      requestedExecutionDate: '2026-11-03',
      createdAt: new Date('2026-11-03T07:00:00.123Z'),
      payouts: [payout({ account_holder_name: `Tom & Jerry <Ltd> "Quoted" ${'x'.repeat(100)}` })],
      debtorAccounts: [debtor('GBP')],
    });
    expect(xml).not.toContain('<Ltd>');
    const document = parse(xml).Document;
    expect(document['@xmlns']).toBe('urn:iso:std:iso:20022:tech:xsd:pain.001.001.09');
    expect(document.CstmrCdtTrfInitn.GrpHdr.CreDtTm).toBe('2026-11-03T07:00:00Z');
    const name: string = document.CstmrCdtTrfInitn.PmtInf[0].CdtTrfTxInf[0].Cdtr.Nm;
    expect(name).toHaveLength(70);
    expect(name.startsWith('Tom and Jerry Ltd Quoted xxx')).toBe(true);
  });

  it('writes a stored name no file can carry romanised, or NOTPROVIDED, rather than hold back every payout of the file', () => {
    const xml = renderPain001File({
      messageId: 'SDPO261103-01-ABCDEF01',
      requestedExecutionDate: '2026-11-03',
      createdAt: new Date(),
      payouts: [
        payout({ reference: 'PO261103ABCDEF0123', account_holder_name: '北京银行' }),
        payout({ reference: 'PO261103ABCDEF0124', account_holder_name: '😀' }),
        payout({ reference: 'PO261103ABCDEF0125', account_holder_name: 'Acme Lending Ltd' }),
      ],
      debtorAccounts: [{ ...debtor('GBP'), account_holder_name: 'Σ' }],
    });
    const information = parse(xml).Document.CstmrCdtTrfInitn.PmtInf[0];
    expect(information.CdtTrfTxInf.map((transfer: { Cdtr: { Nm: string } }) => transfer.Cdtr.Nm)).toEqual(['BeiJingYinXing', 'NOTPROVIDED', 'Acme Lending Ltd']);
    expect(information.Dbtr.Nm).toBe('S');
  });

  it('refuses an empty file, a currency without a debtor account and a non-positive amount', () => {
    const render = (payouts: PayoutFileRow[]) => () =>
      renderPain001File({ messageId: 'SDPO261103-01-ABCDEF01', requestedExecutionDate: '2026-11-03', createdAt: new Date(), payouts, debtorAccounts: [debtor('GBP')] });
    expect(render([])).toThrow(/at least one transfer/);
    expect(render([payout({ currency: 'EUR' })])).toThrow(/EUR/);
    expect(render([payout({ amount: 0 })])).toThrow(/positive amount/);
  });

  it('puts the element children in the order the pain.001.001.09 schema requires', () => {
    const xml = renderPain001File({
      messageId: 'SDPO261103-01-ABCDEF01',
      requestedExecutionDate: '2026-11-03',
      createdAt: new Date(),
      payouts: [payout({})],
      debtorAccounts: [debtor('GBP')],
    });
    const order = (names: string[]) => names.map((name) => xml.indexOf(`<${name}>`));
    const ascending = (positions: number[]) => positions.every((position, index) => position >= 0 && (index === 0 || position > positions[index - 1]!));
    expect(ascending(order(['GrpHdr', 'MsgId', 'CreDtTm', 'NbOfTxs', 'CtrlSum', 'InitgPty', 'PmtInf']))).toBe(true);
    expect(ascending(order(['PmtInfId', 'PmtMtd', 'BtchBookg', 'PmtTpInf', 'ReqdExctnDt', 'Dbtr', 'DbtrAcct', 'DbtrAgt', 'CdtTrfTxInf']))).toBe(true);
    expect(ascending(order(['PmtId', 'InstrId', 'EndToEndId', 'Amt', 'CdtrAgt', 'Cdtr', 'CdtrAcct', 'RmtInf', 'Ustrd']))).toBe(true);
  });
});
