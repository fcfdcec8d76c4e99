import { describe, expect, it } from 'vitest';
import { demoStatementXml } from '../../../src/faces/cli/demo/demo-bank.ts';
import { type SimulatedEntry, simulatedCamt053 } from '../../../src/faces/sandbox/simulated-bank-statement.ts';
import { parseStatement } from '../../../src/settlement/cash/statement-parser.ts';
import { statementIntegrityFindings } from '../../../src/settlement/cash/statement-integrity.ts';
import { declaredMessage, xsdErrors } from '../../support/xsd.ts';

// Every camt file the service writes validates against the official ISO 20022 schema
// (test/fixtures/iso20022/), and reads back through the service's own parser with balances and totals
// that add up: the demo bank's statement (src/faces/cli/demo/demo-bank.ts) and the simulated bank's that the
// benchmarks write (src/faces/sandbox/simulated-bank-statement.ts).

async function* bytes(xml: string): AsyncGenerator<Buffer> {
  yield Buffer.from(xml);
}

async function readBack(xml: string) {
  const file = await parseStatement(bytes(xml), { maxBytes: 50_000_000 });
  expect(file.statements).toHaveLength(1);
  return file.statements[0]!;
}

/** The demo's day at the bank, as remitAndImportStatement builds it: each employer's remittance, two payrolls in one credit, one short, a stray credit. */
function demoEntries(statementDate: string): SimulatedEntry[] {
  const entries: SimulatedEntry[] = [];
  const credit = (amount: number, bookingDate: string, reference: string | null, debtorName: string) =>
    entries.push({
      bankReference: `BNK-${statementDate.replaceAll('-', '')}-${String(entries.length + 1).padStart(4, '0')}`,
      direction: 'credit',
      amount,
      bookingDate,
      reference,
      debtorName,
    });
  credit(12_550 + 8_000, '2026-10-30', 'SDR261030P1A2B SDR261030P3C4D', 'Acme Payroll Ltd');
  credit(42_250, '2026-10-30', 'SDR261030P5E6F', 'Brown & Sons <Bakers>');
  credit(38_025 - 3_802, '2026-10-30', 'SDR261030P7G8H', 'Café René Ltd');
  credit(15_000, statementDate, 'INV 4471 REFUND', 'Office Supplies Ltd');
  return entries;
}

describe('the demo bank statement (camt.053.001.02)', () => {
  const statementDate = '2026-11-02';
  const account = { sortCode: '04-00-04', accountNumber: '41234567' };
  const xml = demoStatementXml({ statementDate, account, entries: demoEntries(statementDate) });

  it('is valid against the official schema', async () => {
    expect(declaredMessage(xml)).toBe('camt.053.001.02');
    expect(await xsdErrors(xml, 'camt.053.001.02')).toEqual([]);
  });

  it('reads back: its balances add up, its totals are its entries', async () => {
    const parsed = await readBack(xml);
    expect(parsed).toMatchObject({ statementId: `STMT-${statementDate}`, account, currency: 'GBP' });
    expect(parsed.balances.map(({ type, amount, date }) => [type, amount, date])).toEqual([
      ['OPBD', 2_500_000, statementDate],
      ['CLBD', 2_500_000 + 20_550 + 42_250 + 34_223 + 15_000, statementDate],
    ]);
    expect(parsed.summary).toEqual({ entries: { count: 4, sum: 112_023, net: 112_023 }, credits: { count: 4, sum: 112_023 }, debits: { count: 0, sum: 0 } });
    expect(
      parsed.entries.map(({ bankReference, amount, remittanceInformation, debtorName, problem }) => [bankReference, amount, remittanceInformation, debtorName, problem]),
    ).toEqual([
      ['BNK-20261102-0001', 20_550, 'SDR261030P1A2B SDR261030P3C4D', 'Acme Payroll Ltd', null],
      ['BNK-20261102-0002', 42_250, 'SDR261030P5E6F', 'Brown & Sons <Bakers>', null],
      ['BNK-20261102-0003', 34_223, 'SDR261030P7G8H', 'Café René Ltd', null],
      ['BNK-20261102-0004', 15_000, 'INV 4471 REFUND', 'Office Supplies Ltd', null],
    ]);
    expect(statementIntegrityFindings(parsed)).toEqual([]);
  });

  it('is valid with no entries too', async () => {
    const empty = demoStatementXml({ statementDate, account, entries: [] });
    expect(await xsdErrors(empty, 'camt.053.001.02')).toEqual([]);
    expect(statementIntegrityFindings(await readBack(empty))).toEqual([]);
  });
});

describe("the simulated bank's statement (camt.053.001.02)", () => {
  it('is valid against the official schema for the benchmarks statement: 1,000 credits, references as employers write them', async () => {
    // As test/bench/remittance.ts and cycle.ts write it: no opening balance, one credit per remittance.
    const entries: SimulatedEntry[] = Array.from({ length: 1_000 }, (_, index) => ({
      bankReference: `BNK${String(index + 1).padStart(8, '0')}`,
      direction: 'credit',
      amount: 10_000 + ((index * 7_919) % 90_000),
      bookingDate: '2026-11-02',
      reference: index % 20 === 0 ? `sdr 261030 p${index} salary deductions` : `SDR261030P${index}`,
      debtorName: 'Employer Ltd',
    }));
    const xml = simulatedCamt053({
      statementId: 'BENCH-STMT-1',
      account: { sortCode: '04-00-04', accountNumber: '41234567' },
      currency: 'GBP',
      createdAt: new Date('2026-11-02T18:00:00Z'),
      entries,
    });
    expect(await xsdErrors(xml, 'camt.053.001.02')).toEqual([]);
    const parsed = await readBack(xml);
    expect(parsed.entries).toHaveLength(1_000);
    expect(parsed.balances[0]).toMatchObject({ type: 'OPBD', amount: 0 });
    expect(statementIntegrityFindings(parsed)).toEqual([]);
  });

  it('is valid with debits, an overdrawn closing balance, entries without a payer or a reference, and another currency', async () => {
    const entries: SimulatedEntry[] = [
      { bankReference: 'B1', direction: 'credit', amount: 1_000, bookingDate: '2026-11-02', reference: null, debtorName: null },
      { bankReference: 'B2', direction: 'debit', amount: 5_000, bookingDate: '2026-11-02', reference: 'PAYOUT PO-2611-7', debtorName: null },
    ];
    for (const [currency, openingBalance] of [
      ['GBP', 1_500],
      ['GBP', -250],
      ['JPY', 0],
    ] as const) {
      const xml = simulatedCamt053({
        statementId: 'S',
        account: { sortCode: '60-16-13', accountNumber: '31926819' },
        currency,
        createdAt: new Date('2026-11-02T18:00:00Z'),
        openingBalance,
        entries,
      });
      expect(await xsdErrors(xml, 'camt.053.001.02')).toEqual([]);
      const parsed = await readBack(xml);
      expect(parsed.balances.map(({ type, amount }) => [type, amount])).toEqual([
        ['OPBD', openingBalance],
        ['CLBD', openingBalance - 4_000],
      ]);
      expect(statementIntegrityFindings(parsed)).toEqual([]);
    }
  });
});
