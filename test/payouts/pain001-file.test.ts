import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { createClient } from '../../src/auth/clients-service.ts';
import { formatMinorUnits } from '../../src/money/major-units.ts';
import { isoLatinText } from '../../src/payouts/pain001-file.ts';
import { payoutBankFile, payoutPain001File, runPayouts } from '../../src/payouts/payout-service.ts';
import { ConflictError, NotFoundError } from '../../src/shared/domain-errors.ts';
import { cliEnvOf, runDeductions } from '../support/cli.ts';
import { createBiller, createCollectionAccount, createPayoutRow } from '../support/factories.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { createWorld, PD1 } from '../reconciliation/reconciliation-world.ts';

// The pain.001 file of a date's payouts, generated from payouts the daily run really made, read back
// and held against the database: every amount, account, sort code, name and reference, and the counts
// and control sums, per currency and in total.

// Tuesday 3 November 2026: with one working day of settlement, the Friday 30 October pay date pays out.
const PAYOUT_DATE = '2026-11-03';

let t: TestApp;

const beneficiaries = [
  { sort_code: '60-16-13', account_number: '31926819', account_holder_name: 'Société Générale & Partners Lending Limited, trading as a name far too long for a bank' },
  { sort_code: '20-00-00', account_number: '05550123', account_holder_name: 'Northwind Lending Ltd' },
];

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  await t.db
    .insertInto('collection_accounts')
    .values({ currency: 'EUR', account_number: '87654321', sort_code: '40-11-62', account_holder_name: 'Salary Deductions Collections Ltd' })
    .execute();
  for (const [index, amounts] of [
    [12_550, 10_001],
    [4_000, 2_507],
  ].entries()) {
    const w = await createWorld(t.db, { employees: 2 });
    for (const [person, amount] of amounts.entries()) await w.payment(person, amount);
    await w.lock(PD1);
    for (const [person, amount] of amounts.entries()) await w.push(w.people[person]!.employee.id, PD1, amount);
    await w.reconcile(PD1);
    await t.db.insertInto('beneficiary_accounts').values({ biller_client_id: w.biller.clientId, currency: 'GBP', ...beneficiaries[index]! }).execute();
  }
  const summary = await runPayouts(t.db, { funding: 'deducted', today: PAYOUT_DATE, settlementDelayWorkingDays: 1, holidays: new Set() });
  expect(summary.groups.map((group) => group.outcome)).toEqual(['paid_out', 'paid_out']);
  // A second currency pays from its own collection account; a sandbox biller's payout is never in a bank file.
  await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, currency: 'EUR', payoutDate: PAYOUT_DATE, amount: 98_765 });
  const sandbox = await createClient(t.db, { name: 'Sandbox twin', role: 'biller', sandbox: true });
  await createPayoutRow(t.db, { billerClientId: sandbox.clientId, payoutDate: PAYOUT_DATE, amount: 1_111 });
});
afterAll(async () => t?.close());

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  // Amounts, account numbers and ids are read as the text they are: "0.10" and "05550123" stay so.
  parseTagValue: false,
  isArray: (name) => ['PmtInf', 'CdtTrfTxInf'].includes(name),
});

interface Transfer {
  PmtId: { InstrId: string; EndToEndId: string };
  Amt: { InstdAmt: { '@Ccy': string; '#text': string } };
  CdtrAgt: { FinInstnId: { ClrSysMmbId: { ClrSysId: { Cd: string }; MmbId: string } } };
  Cdtr: { Nm: string };
  CdtrAcct: { Id: { Othr: { Id: string; SchmeNm: { Cd: string } } } };
  RmtInf: { Ustrd: string };
}

function read(xml: string) {
  return parser.parse(xml).Document.CstmrCdtTrfInitn as {
    GrpHdr: { MsgId: string; CreDtTm: string; NbOfTxs: string; CtrlSum: string; InitgPty: { Nm: string } };
    PmtInf: Array<{
      PmtInfId: string;
      PmtMtd: string;
      BtchBookg: string;
      NbOfTxs: string;
      CtrlSum: string;
      PmtTpInf: { SvcLvl: { Cd: string } };
      ReqdExctnDt: { Dt: string };
      Dbtr: { Nm: string };
      DbtrAcct: { Id: { Othr: { Id: string; SchmeNm: { Cd: string } } }; Ccy: string };
      DbtrAgt: { FinInstnId: { ClrSysMmbId: { ClrSysId: { Cd: string }; MmbId: string } } };
      CdtTrfTxInf: Transfer[];
    }>;
  };
}

const livePayoutsOfTheDay = () =>
  t.db
    .selectFrom('payouts')
    .innerJoin('clients', 'clients.id', 'payouts.biller_client_id')
    .selectAll('payouts')
    .where('payouts.payout_date', '=', PAYOUT_DATE)
    .where('clients.sandbox', '=', false)
    .execute();

const digits = (sortCode: string) => sortCode.replaceAll('-', '');

describe('the pain.001 file of a payout date', () => {
  it('holds one transfer per live payout, each matching the database', async () => {
    const payouts = await livePayoutsOfTheDay();
    expect(payouts).toHaveLength(3);
    const file = await payoutPain001File(t.db, PAYOUT_DATE);
    expect(file.fileName).toBe(`payouts-${PAYOUT_DATE}.pain.001.xml`);
    expect(file.payouts).toBe(3);
    expect(file.xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09">/);

    const message = read(file.xml);
    const transfers = message.PmtInf.flatMap((block) => block.CdtTrfTxInf.map((transfer) => ({ block, transfer })));
    expect(transfers.map(({ transfer }) => transfer.PmtId.EndToEndId).sort()).toEqual(payouts.map((payout) => payout.reference).sort());
    for (const payout of payouts) {
      const { block, transfer } = transfers.find(({ transfer: candidate }) => candidate.PmtId.EndToEndId === payout.reference)!;
      expect(transfer).toEqual({
        PmtId: { InstrId: payout.reference, EndToEndId: payout.reference },
        Amt: { InstdAmt: { '@Ccy': payout.currency, '#text': formatMinorUnits(payout.amount, payout.currency) } },
        CdtrAgt: { FinInstnId: { ClrSysMmbId: { ClrSysId: { Cd: 'GBDSC' }, MmbId: digits(payout.sort_code) } } },
        Cdtr: { Nm: isoLatinText(payout.account_holder_name, 70) },
        CdtrAcct: { Id: { Othr: { Id: `${digits(payout.sort_code)}${payout.account_number}`, SchmeNm: { Cd: 'BBAN' } } } },
        RmtInf: { Ustrd: payout.reference },
      });
      expect(block.DbtrAcct.Ccy).toBe(payout.currency);
    }
    // The runPayouts payouts carry the beneficiary accounts' details, names reduced to what banks accept.
    const names = transfers.map(({ transfer }) => transfer.Cdtr.Nm);
    expect(names).toContain('Societe Generale + Partners Lending Limited, trading as a name far too');
    expect(names).toContain('Northwind Lending Ltd');
    expect(transfers.map(({ transfer }) => transfer.CdtrAcct.Id.Othr.Id)).toEqual(expect.arrayContaining(['60161331926819', '20000005550123']));
    expect(transfers.map(({ transfer }) => transfer.Amt.InstdAmt['#text']).sort()).toEqual(['225.51', '65.07', '987.65']);
  });

  it('pays each currency from its active collection account on the payout date, with counts and control sums', async () => {
    const payouts = await livePayoutsOfTheDay();
    const accounts = await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).execute();
    const message = read((await payoutPain001File(t.db, PAYOUT_DATE)).xml);

    expect(message.GrpHdr.NbOfTxs).toBe(String(payouts.length));
    const total = payouts.reduce((sum, payout) => sum + payout.amount, 0);
    expect(message.GrpHdr.CtrlSum).toBe(formatMinorUnits(total, 'GBP'));
    expect(message.GrpHdr.CtrlSum).toBe('1278.23');
    expect(message.GrpHdr.InitgPty.Nm).toBe('Salary Deductions Collections Ltd');

    expect(message.PmtInf.map((block) => block.DbtrAcct.Ccy)).toEqual(['EUR', 'GBP']);
    for (const block of message.PmtInf) {
      const currency = block.DbtrAcct.Ccy;
      const ofCurrency = payouts.filter((payout) => payout.currency === currency);
      const account = accounts.find((candidate) => candidate.currency === currency)!;
      expect(block).toMatchObject({
        PmtInfId: `${message.GrpHdr.MsgId}-${currency}`,
        PmtMtd: 'TRF',
        BtchBookg: 'false',
        NbOfTxs: String(ofCurrency.length),
        CtrlSum: formatMinorUnits(
          ofCurrency.reduce((sum, payout) => sum + payout.amount, 0),
          currency,
        ),
        PmtTpInf: { SvcLvl: { Cd: 'NURG' } },
        ReqdExctnDt: { Dt: PAYOUT_DATE },
        Dbtr: { Nm: account.account_holder_name },
        DbtrAcct: { Id: { Othr: { Id: `${digits(account.sort_code)}${account.account_number}`, SchmeNm: { Cd: 'BBAN' } } }, Ccy: currency },
        DbtrAgt: { FinInstnId: { ClrSysMmbId: { ClrSysId: { Cd: 'GBDSC' }, MmbId: digits(account.sort_code) } } },
      });
      expect(block.CdtTrfTxInf).toHaveLength(ofCurrency.length);
    }
    expect(message.PmtInf.find((block) => block.DbtrAcct.Ccy === 'GBP')!.CtrlSum).toBe('290.58');
    expect(message.PmtInf.find((block) => block.DbtrAcct.Ccy === 'EUR')!.DbtrAcct.Id.Othr.Id).toBe('40116287654321');
  });

  it('keeps its MsgId across generations of the same payouts, and changes it when they change', async () => {
    const first = read((await payoutPain001File(t.db, PAYOUT_DATE, new Date('2026-11-03T07:00:00Z'))).xml);
    const second = read((await payoutPain001File(t.db, PAYOUT_DATE, new Date('2026-11-03T09:30:00Z'))).xml);
    expect(first.GrpHdr.MsgId).toMatch(/^SDPO261103[0-9A-F]{8}$/);
    expect(second.GrpHdr.MsgId).toBe(first.GrpHdr.MsgId);
    expect([first.GrpHdr.CreDtTm, second.GrpHdr.CreDtTm]).toEqual(['2026-11-03T07:00:00Z', '2026-11-03T09:30:00Z']);
    expect(second).toEqual({ ...first, GrpHdr: { ...first.GrpHdr, CreDtTm: second.GrpHdr.CreDtTm } });

    const laterDay = '2026-11-05';
    await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: laterDay });
    const before = read((await payoutPain001File(t.db, laterDay)).xml).GrpHdr.MsgId;
    await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: laterDay });
    const after = read((await payoutPain001File(t.db, laterDay)).xml);
    expect(after.GrpHdr.MsgId).not.toBe(before);
    expect(after.GrpHdr.NbOfTxs).toBe('2');
  });

  it('is not found for a date without live payouts, where the CSV is its header alone', async () => {
    await expect(payoutPain001File(t.db, '2026-11-04')).rejects.toThrow(NotFoundError);
    await expect(payoutPain001File(t.db, '2026-11-04')).rejects.toThrow('A live payout made on 2026-11-04 was not found');
    expect((await payoutBankFile(t.db, '2026-11-04')).payouts).toBe(0);
  });

  it('refuses a currency without an active collection account, naming it', async () => {
    await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, currency: 'USD', payoutDate: '2026-11-06' });
    const refusal = payoutPain001File(t.db, '2026-11-06');
    await expect(refusal).rejects.toThrow(ConflictError);
    await expect(payoutPain001File(t.db, '2026-11-06')).rejects.toMatchObject({ code: 'no-collection-account', members: { currencies: ['USD'] } });
  });
});

// Four `deductions` processes, each loading the whole service: slow on a busy machine.
describe('deductions export payouts --format pain.001', { timeout: 90_000 }, () => {
  it('writes the same document as payoutPain001File, and csv stays the default', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'pain001-'));
    try {
      const out = join(directory, `payouts-${PAYOUT_DATE}.pain.001.xml`);
      const cli = await runDeductions(['export', 'payouts', '--date', PAYOUT_DATE, '--format', 'pain.001', '--out', out], cliEnvOf(t.config));
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stderr).toContain(`Wrote 3 payout(s) made on ${PAYOUT_DATE}`);
      const written = read(await readFile(out, 'utf8'));
      const expected = read((await payoutPain001File(t.db, PAYOUT_DATE)).xml);
      expect(written).toEqual({ ...expected, GrpHdr: { ...expected.GrpHdr, CreDtTm: written.GrpHdr.CreDtTm } });

      const csv = await runDeductions(['export', 'payouts', '--date', PAYOUT_DATE], cliEnvOf(t.config));
      expect(csv.code, csv.stderr).toBe(0);
      expect(csv.stdout).toBe((await payoutBankFile(t.db, PAYOUT_DATE)).csv);

      const none = await runDeductions(['export', 'payouts', '--date', '2026-11-04', '--format', 'pain.001'], cliEnvOf(t.config));
      expect(none.code).not.toBe(0);
      expect(none.stderr).toContain('A live payout made on 2026-11-04 was not found');

      const unknown = await runDeductions(['export', 'payouts', '--date', PAYOUT_DATE, '--format', 'mt101'], cliEnvOf(t.config));
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('csv, pain.001');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
