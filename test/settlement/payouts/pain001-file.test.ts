import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { createClient } from '../../../src/directory/auth/clients-service.ts';
import { formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import { isoLatinText } from '../../../src/settlement/payouts/pain001-file.ts';
import { listPaymentFilePayouts, listPaymentFilesOfDate } from '../../../src/settlement/payouts/payment-file-repository.ts';
import { createPaymentFiles, latestPaymentFileOf, paymentFileDownload } from '../../../src/settlement/payouts/payment-file-service.ts';
import { payoutExecutionDate } from '../../../src/settlement/payouts/payout-calendar.ts';
import { loadClearingHolidays, markPayoutFailed, runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { ConflictError, NotFoundError } from '../../../src/platform/shared/domain-errors.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createBiller, createCollectionAccount, createPayoutRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { xsdErrors } from '../../support/xsd.ts';
import { createWorld, PD1, type World } from '../../cycle/reconciliation/reconciliation-world.ts';

// Payment files of payouts the daily run really made: written once, stored and numbered per payout
// date; each payout instructed in exactly one of them; read back and held against the database and the
// official pain.001.001.09 schema: every amount, account, sort code, name and reference, and the counts
// and control sums, per currency and in total.

// Tuesday 3 November 2026: with one working day of settlement, the Friday 30 October pay date pays out.
const PAYOUT_DATE = '2026-11-03';
const NEXT_DAY = '2026-11-04';
const actor = cliActor('finance-test');

let t: TestApp;
let worlds: World[];

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
  worlds = [];
  for (const [index, amounts] of [
    [12_550, 10_001],
    [4_000, 2_507],
  ].entries()) {
    const w = await createWorld(t.db, { employees: 2 });
    for (const [person, amount] of amounts.entries()) await w.payment(person, amount);
    await w.lock(PD1);
    for (const [person, amount] of amounts.entries()) await w.push(w.people[person]!.employee.id, PD1, amount);
    await w.reconcile(PD1);
    await t.db
      .insertInto('beneficiary_accounts')
      .values({ biller_client_id: w.biller.clientId, currency: 'GBP', ...beneficiaries[index]! })
      .execute();
    worlds.push(w);
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

function read(xml: string | Buffer) {
  return parser.parse(xml.toString()).Document.CstmrCdtTrfInitn as {
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

const transfersOf = (xml: string | Buffer) => read(xml).PmtInf.flatMap((block) => block.CdtTrfTxInf.map((transfer) => ({ block, transfer })));

const livePayoutsOf = (payoutDate: string) =>
  t.db
    .selectFrom('payouts')
    .innerJoin('clients', 'clients.id', 'payouts.biller_client_id')
    .selectAll('payouts')
    .where('payouts.payout_date', '=', payoutDate)
    .where('clients.sandbox', '=', false)
    .execute();

const filedPayoutIds = async () => (await t.db.selectFrom('payment_file_payouts').select('payout_id').execute()).map((row) => row.payout_id);

const digits = (sortCode: string) => sortCode.replaceAll('-', '');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('the payment file of a payout date', () => {
  let first: { id: string; xml: Buffer; csv: Buffer };

  it('instructs every pending live payout of the date once, each transfer matching the database, valid against the schema', async () => {
    const payouts = await livePayoutsOf(PAYOUT_DATE);
    expect(payouts).toHaveLength(3);
    const written = await createPaymentFiles(t.db, PAYOUT_DATE, { actor, now: new Date('2026-11-03T07:05:00.789Z') });
    expect(written).toHaveLength(1);
    const file = written[0]!;
    expect(file).toMatchObject({ payout_date: PAYOUT_DATE, sequence: 1, legacy: false, requested_execution_date: PAYOUT_DATE, created_by: 'finance-test' });
    expect(file.message_id).toMatch(/^SDPO261103-01-[0-9A-F]{8}$/);
    expect(file.message_id!.slice(-8)).toBe(file.id.replaceAll('-', '').slice(0, 8).toUpperCase());
    expect(file.totals).toEqual([
      { currency: 'EUR', transfers: 1, amount: 98_765 },
      { currency: 'GBP', transfers: 2, amount: 29_058 },
    ]);
    expect((await filedPayoutIds()).sort()).toEqual(payouts.map((payout) => payout.id).sort());

    const pain001 = await paymentFileDownload(t.db, file.id, 'pain.001');
    expect(pain001.fileName).toBe(`payouts-${PAYOUT_DATE}-01.pain.001.xml`);
    expect(pain001.contentType).toBe('application/xml');
    const xml = pain001.content.toString('utf8');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09">/);
    expect(await xsdErrors(xml, 'pain.001.001.09')).toEqual([]);
    expect(read(xml).GrpHdr).toMatchObject({ MsgId: file.message_id, CreDtTm: '2026-11-03T07:05:00Z' });

    const transfers = transfersOf(xml);
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
    expect(names).toContain(isoLatinText(beneficiaries[0]!.account_holder_name, 70));
    expect(names.every((name) => /^[A-Za-z0-9/\-?:().,'+ ]{1,70}$/.test(name))).toBe(true);
    expect(names).toContain('Northwind Lending Ltd');
    expect(transfers.map(({ transfer }) => transfer.Amt.InstdAmt['#text']).sort()).toEqual(['225.51', '65.07', '987.65']);
    first = { id: file.id, xml: pain001.content, csv: (await paymentFileDownload(t.db, file.id, 'csv')).content };
  });

  it('pays each currency from its active collection account on the execution date, with counts and control sums', async () => {
    const payouts = await livePayoutsOf(PAYOUT_DATE);
    const accounts = await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).execute();
    const message = read(first.xml);

    expect(message.GrpHdr.NbOfTxs).toBe(String(payouts.length));
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

  it('is a stored document: every download gives the same bytes, and the CSV the same payouts under the same MsgId', async () => {
    const again = await paymentFileDownload(t.db, first.id, 'pain.001');
    expect(again.content.equals(first.xml)).toBe(true);
    expect(again.sha256).toBe(sha256(first.xml));
    const csv = await paymentFileDownload(t.db, first.id, 'csv');
    expect(csv.content.equals(first.csv)).toBe(true);
    expect(csv.fileName).toBe(`payouts-${PAYOUT_DATE}-01.csv`);
    expect(csv.contentType).toBe('text/csv; charset=utf-8');
    const rows = parseCsv(csv.content.toString('utf8'), { columns: true }) as Array<Record<string, string>>;
    const messageId = read(first.xml).GrpHdr.MsgId;
    expect(rows.map((row) => row.reference).sort()).toEqual(
      transfersOf(first.xml)
        .map(({ transfer }) => transfer.PmtId.EndToEndId)
        .sort(),
    );
    for (const row of rows) expect(row).toMatchObject({ message_id: messageId, requested_execution_date: PAYOUT_DATE, status: 'pending', payout_date: PAYOUT_DATE });

    // The bank returns one transfer: the payout is failed, the record of what was sent is not rewritten.
    const returned = (await livePayoutsOf(PAYOUT_DATE)).find((payout) => payout.biller_client_id === worlds[1]!.biller.clientId)!;
    await t.db.transaction().execute((trx) => markPayoutFailed(trx, returned.id, { actor, reason: 'Returned by the bank: account closed' }));
    expect((await paymentFileDownload(t.db, first.id, 'pain.001')).content.equals(first.xml)).toBe(true);
    expect((await paymentFileDownload(t.db, first.id, 'csv')).content.equals(first.csv)).toBe(true);
  });

  it('writes nothing more when every payout of the date is in a file: running it again, or downloading again, is safe', async () => {
    expect(await createPaymentFiles(t.db, PAYOUT_DATE, { actor })).toEqual([]);
    const latest = await latestPaymentFileOf(t.db, PAYOUT_DATE, 'pain.001', { actor });
    expect(latest.written).toEqual([]);
    expect(latest.file.id).toBe(first.id);
    expect(latest.content.equals(first.xml)).toBe(true);
    expect(await listPaymentFilesOfDate(t.db, PAYOUT_DATE)).toHaveLength(1);
  });

  it('puts payouts made after a file into a new file of the date holding only them, under a new MsgId', async () => {
    const later = await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: PAYOUT_DATE, amount: 4_321 });
    const latest = await latestPaymentFileOf(t.db, PAYOUT_DATE, 'pain.001', { actor });
    expect(latest.written.map((file) => file.id)).toEqual([latest.file.id]);
    expect(latest.file).toMatchObject({ sequence: 2, totals: [{ currency: 'GBP', transfers: 1, amount: 4_321 }] });
    expect(latest.fileName).toBe(`payouts-${PAYOUT_DATE}-02.pain.001.xml`);
    expect(await xsdErrors(latest.content.toString(), 'pain.001.001.09')).toEqual([]);
    const message = read(latest.content);
    expect(message.GrpHdr.MsgId).not.toBe(read(first.xml).GrpHdr.MsgId);
    expect(message.GrpHdr.MsgId).toMatch(/^SDPO261103-02-/);
    expect(transfersOf(latest.content).map(({ transfer }) => transfer.PmtId.EndToEndId)).toEqual([later.reference]);

    // The first file is as it was written; across the date's files each live payout is instructed once.
    expect((await paymentFileDownload(t.db, first.id, 'pain.001')).content.equals(first.xml)).toBe(true);
    const files = await listPaymentFilesOfDate(t.db, PAYOUT_DATE);
    expect(files.map((file) => file.sequence)).toEqual([1, 2]);
    const instructed = (await Promise.all(files.map((file) => listPaymentFilePayouts(t.db, file.id)))).flat().map((payout) => payout.id);
    expect(new Set(instructed).size).toBe(instructed.length);
    expect(instructed.sort()).toEqual((await livePayoutsOf(PAYOUT_DATE)).map((payout) => payout.id).sort());
  });

  it('never instructs a payout that is already paid or failed', async () => {
    const day = '2026-11-10';
    const biller = (await createBiller(t.db)).clientId;
    await createPayoutRow(t.db, { billerClientId: biller, payoutDate: day, status: 'paid' });
    await createPayoutRow(t.db, { billerClientId: biller, payoutDate: day, currency: 'EUR', status: 'failed' });
    const pending = await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: day });
    // Failed before any file took it: its money is due again, as a new payout.
    await t.db.transaction().execute((trx) => markPayoutFailed(trx, pending.id, { actor, reason: 'Beneficiary account closed before sending' }));
    expect(await createPaymentFiles(t.db, day, { actor })).toEqual([]);
    await expect(latestPaymentFileOf(t.db, day, 'csv', { actor })).rejects.toThrow(`A payment file of the payouts made on ${day} was not found`);
    expect(await listPaymentFilesOfDate(t.db, day)).toEqual([]);
  });

  it('cannot hold a payout in two files, nor be changed or deleted: the database refuses', async () => {
    const [one, two] = await listPaymentFilesOfDate(t.db, PAYOUT_DATE);
    const [payoutOfOne] = await listPaymentFilePayouts(t.db, one!.id);
    await expect(t.db.insertInto('payment_file_payouts').values({ payout_id: payoutOfOne!.id, payment_file_id: two!.id }).execute()).rejects.toMatchObject({
      code: '23505',
      constraint: 'payment_file_payouts_pkey',
    });
    await expect(t.db.updateTable('payment_file_payouts').set({ payment_file_id: two!.id }).where('payout_id', '=', payoutOfOne!.id).execute()).rejects.toThrow(
      /payment_file_payouts is the record of what was sent to the bank: UPDATE refused/,
    );
    await expect(t.db.deleteFrom('payment_file_payouts').where('payout_id', '=', payoutOfOne!.id).execute()).rejects.toThrow(/DELETE refused/);
    await expect(t.db.updateTable('payment_files').set({ created_by: 'someone else' }).where('id', '=', one!.id).execute()).rejects.toThrow(
      /payment_files is the record of what was sent to the bank: UPDATE refused/,
    );
    await expect(t.db.deleteFrom('payment_files').where('id', '=', one!.id).execute()).rejects.toThrow(/DELETE refused/);
    // A second file of the same number, or with the same MsgId, is refused too.
    await expect(
      t.db
        .insertInto('payment_files')
        .values({ ...(await t.db.selectFrom('payment_files').selectAll().where('id', '=', two!.id).executeTakeFirstOrThrow()), id: crypto.randomUUID(), legacy: false })
        .execute(),
    ).rejects.toMatchObject({ code: '23505' });
  });

  it('is written once when several writers ask for the same date at the same moment', async () => {
    const day = '2026-11-12';
    const payouts = await Promise.all([1, 2, 3].map(async () => createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: day })));
    const results = await Promise.all(Array.from({ length: 6 }, () => createPaymentFiles(t.db, day, { actor })));
    expect(results.flat()).toHaveLength(1);
    const files = await listPaymentFilesOfDate(t.db, day);
    expect(files).toHaveLength(1);
    expect((await listPaymentFilePayouts(t.db, files[0]!.id)).map((payout) => payout.id).sort()).toEqual(payouts.map((payout) => payout.id).sort());
  });

  it('asks the bank to pay on the next business day when the payout date is a weekend or bank holiday', async () => {
    for (const [day, execution] of [
      ['2026-11-07', '2026-11-09'], // Saturday: Monday
      ['2027-03-26', '2027-03-30'], // Good Friday: the Tuesday after Easter Monday
      ['2026-12-25', '2026-12-29'], // Christmas: past Boxing Day's substitute
    ] as const) {
      await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: day });
      // Written on the payout date itself: a file written later asks for no day in the past (payoutExecutionDate).
      const [file] = await createPaymentFiles(t.db, day, { actor, now: new Date(`${day}T09:00:00Z`) });
      expect(file!.requested_execution_date, day).toBe(execution);
      const xml = (await paymentFileDownload(t.db, file!.id, 'pain.001')).content.toString();
      expect(read(xml).PmtInf.map((block) => block.ReqdExctnDt.Dt)).toEqual([execution]);
      expect(await xsdErrors(xml, 'pain.001.001.09')).toEqual([]);
      const csv = parseCsv((await paymentFileDownload(t.db, file!.id, 'csv')).content, { columns: true }) as Array<Record<string, string>>;
      expect(csv.map((row) => [row.payout_date, row.requested_execution_date])).toEqual([[day, execution]]);
    }
    // A day operators close (a state funeral) counts as a bank holiday.
    await t.db.insertInto('bank_holidays').values({ region: 'england-and-wales', holiday_date: '2026-11-17', name: 'State funeral', added_by: 'test' }).execute();
    await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: '2026-11-17' });
    expect((await createPaymentFiles(t.db, '2026-11-17', { actor, now: new Date('2026-11-17T09:00:00Z') }))[0]!.requested_execution_date).toBe('2026-11-18');
  });

  it('asks for no day in the past when the file is written after its payout date', async () => {
    await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: '2026-11-24' });
    // Written on Saturday the 28th: the first business day from then, Monday the 30th.
    const [file] = await createPaymentFiles(t.db, '2026-11-24', { actor, now: new Date('2026-11-28T10:00:00Z') });
    expect(file!.requested_execution_date).toBe('2026-11-30');
  });

  it('is refused, writing nothing, while a currency of the payouts has no active collection account', async () => {
    const usd = await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, currency: 'USD', payoutDate: '2026-11-06' });
    await expect(createPaymentFiles(t.db, '2026-11-06', { actor })).rejects.toThrow(ConflictError);
    await expect(createPaymentFiles(t.db, '2026-11-06', { actor })).rejects.toMatchObject({ code: 'no-collection-account', members: { currencies: ['USD'] } });
    expect(await listPaymentFilesOfDate(t.db, '2026-11-06')).toEqual([]);
    expect(await filedPayoutIds()).not.toContain(usd.id);
  });

  it('is not found for a date without payouts or files', async () => {
    await expect(latestPaymentFileOf(t.db, '2026-11-05', 'pain.001', { actor })).rejects.toThrow(NotFoundError);
    await expect(paymentFileDownload(t.db, crypto.randomUUID(), 'csv')).rejects.toThrow(NotFoundError);
    await expect(paymentFileDownload(t.db, 'not-an-id', 'csv')).rejects.toThrow(NotFoundError);
  });
});

describe('a failed payout', () => {
  it('is never instructed again: its money is paid by a new payout with its own EndToEndId, in a file of that day', async () => {
    const biller = worlds[1]!.biller.clientId;
    const [failedFile] = await listPaymentFilesOfDate(t.db, PAYOUT_DATE);
    const original = (await listPaymentFilePayouts(t.db, failedFile!.id)).find((payout) => payout.biller_client_id === biller)!;
    expect(original.status).toBe('failed');
    const before = await paymentFileDownload(t.db, failedFile!.id, 'pain.001');

    const summary = await runPayouts(t.db, { funding: 'deducted', today: NEXT_DAY, settlementDelayWorkingDays: 1, holidays: new Set() });
    const again = summary.groups.find((group) => group.billerClientId === biller);
    if (again?.outcome !== 'paid_out') throw new Error(`no new payout: ${JSON.stringify(again)}`);
    expect(again.payoutId).not.toBe(original.id);
    expect(again.reference).not.toBe(original.reference);

    const [file] = await createPaymentFiles(t.db, NEXT_DAY, { actor });
    const transfers = transfersOf((await paymentFileDownload(t.db, file!.id, 'pain.001')).content);
    const ends = transfers.map(({ transfer }) => transfer.PmtId.EndToEndId);
    expect(ends).toContain(again.reference);
    expect(ends).not.toContain(original.reference);
    expect(transfers.find(({ transfer }) => transfer.PmtId.EndToEndId === again.reference)!.transfer.Amt.InstdAmt['#text']).toBe('65.07');
    // The file the failed payout went in is unchanged: the record of what was sent.
    expect((await paymentFileDownload(t.db, failedFile!.id, 'pain.001')).content.equals(before.content)).toBe(true);
    // Every EndToEndId of every file is a distinct payout reference.
    const everyFile = await t.db.selectFrom('payment_files').select(['id']).where('legacy', '=', false).execute();
    const allEnds = (
      await Promise.all(
        everyFile.map(async (row) => transfersOf((await paymentFileDownload(t.db, row.id, 'pain.001')).content).map(({ transfer }) => transfer.PmtId.EndToEndId)),
      )
    ).flat();
    expect(new Set(allEnds).size).toBe(allEnds.length);
  });
});

// `deductions` processes, each loading the service: slow on a busy machine.
describe('deductions export payouts', { timeout: 120_000 }, () => {
  it('writes the stored file, as pain.001 or CSV (the default), lists the files of a date, and exports one by number', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'pain001-'));
    const env = cliEnvOf(t.config);
    try {
      const day = '2026-11-19';
      const payout = await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: day, amount: 7_777 });
      const out = join(directory, 'file.pain.001.xml');
      const cli = await runDeductions(['export', 'payouts', '--date', day, '--format', 'pain.001', '--out', out, '--by', 'Fiona'], env);
      expect(cli.code, cli.stderr).toBe(0);
      // The CLI writes with the real clock: a day in the past is executed on the first business day from today.
      const execution = payoutExecutionDate(day, serviceToday(new Date(), 'Europe/London'), await loadClearingHolidays(t.db));
      expect(cli.stderr).toMatch(new RegExp(`New payment file 1 of ${day} \\(SDPO261119-01-[0-9A-F]{8}, execution ${execution}\\): 1 payout\\(s\\) to ${out}`));
      const [file] = await listPaymentFilesOfDate(t.db, day);
      expect(file!.created_by).toBe('Fiona');
      expect((await readFile(out)).equals((await paymentFileDownload(t.db, file!.id, 'pain.001')).content)).toBe(true);

      // Again, as CSV to stdout: the same file (nothing was waiting), its CSV rendering.
      const csv = await runDeductions(['export', 'payouts', '--date', day], env);
      expect(csv.code, csv.stderr).toBe(0);
      expect(csv.stdout).toBe((await paymentFileDownload(t.db, file!.id, 'csv')).content.toString());
      expect(csv.stdout).toContain(payout.id);
      expect(csv.stderr).toContain('this is the latest file again, as stored');
      expect(await listPaymentFilesOfDate(t.db, day)).toHaveLength(1);

      const listed = await runDeductions(['export', 'payouts', '--date', PAYOUT_DATE, '--list'], env);
      expect(listed.code, listed.stderr).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        /^01 {2}SDPO261103-01-[0-9A-F]{8} execution 2026-11-03 {2}3 payout\(s\) €987\.65, £290\.58 {2}written 2026-11-03T07:05:00\.000Z by finance-test/,
      );
      expect(lines[1]).toMatch(/^02 {2}SDPO261103-02-/);

      const second = await runDeductions(['export', 'payouts', '--date', PAYOUT_DATE, '--file', '1', '--format', 'pain.001'], env);
      expect(second.code, second.stderr).toBe(0);
      const [one] = await listPaymentFilesOfDate(t.db, PAYOUT_DATE);
      expect(second.stdout).toBe((await paymentFileDownload(t.db, one!.id, 'pain.001')).content.toString());

      const none = await runDeductions(['export', 'payouts', '--date', '2026-11-05', '--format', 'pain.001'], env);
      expect(none.code).not.toBe(0);
      expect(none.stderr).toContain('A payment file of the payouts made on 2026-11-05 was not found');

      const unknown = await runDeductions(['export', 'payouts', '--date', PAYOUT_DATE, '--format', 'mt101'], env);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('csv, pain.001');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
