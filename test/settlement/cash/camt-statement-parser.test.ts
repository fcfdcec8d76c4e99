import { createReadStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { SUPPORTED_CURRENCIES, currencyExponent } from '../../../src/platform/money/currency.ts';
import { formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import {
  type FilePosition,
  type ParsedStatement,
  type ParsedStatementFile,
  type StatementEntry,
  StatementRejected,
  ibanChecksumIsValid,
  readStatementAmount,
  statementAmountInMinorUnits,
  ukAccountFromIban,
} from '../../../src/settlement/cash/bank-statement.ts';
import { parseStatement } from '../../../src/settlement/cash/statement-parser.ts';
import { statementIntegrityFindings } from '../../../src/settlement/cash/statement-integrity.ts';
import { type Iso20022Message, xsdErrors } from '../../support/xsd.ts';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const MAX = 1_000_000;

async function* chunked(text: string | Buffer, size: number): AsyncGenerator<Buffer> {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

function parseFile(text: string | Buffer, chunkSize = 97, maxBytes = MAX): Promise<ParsedStatementFile> {
  return parseStatement(chunked(text, chunkSize), { maxBytes });
}

/** The file's one statement. */
async function parse(text: string | Buffer, chunkSize = 97, maxBytes = MAX): Promise<ParsedStatement> {
  const file = await parseFile(text, chunkSize, maxBytes);
  expect(file.statements).toHaveLength(1);
  return file.statements[0]!;
}

async function rejection(promise: Promise<unknown>): Promise<StatementRejected> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof StatementRejected)) throw new Error(`expected StatementRejected, got ${String(error)}`);
  return error;
}

/** 1-based line and column of the nth occurrence of `needle` in `text`, counted by hand, not by saxes. */
function positionOf(text: string, needle: string, occurrence = 1): FilePosition {
  let index = -1;
  for (let seen = 0; seen < occurrence; seen += 1) {
    index = text.indexOf(needle, index + 1);
    if (index < 0) throw new Error(`${needle} occurs fewer than ${occurrence} times`);
  }
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  return { line, column: index - before.lastIndexOf('\n') };
}

const ACCOUNT = '<Acct><Id><IBAN>GB29NWBK60161331926819</IBAN></Id><Ccy>GBP</Ccy></Acct>';
const UK_ACCOUNT = { sortCode: '60-16-13', accountNumber: '31926819' };

function camt053(body: string, { version = '02', account = ACCOUNT, id = '<Id>S1</Id>', header = '<GrpHdr><MsgId>M1</MsgId></GrpHdr>' } = {}): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.${version}">`,
    '<BkToCstmrStmt>',
    header,
    '<Stmt>',
    id,
    account,
    body,
    '</Stmt>',
    '</BkToCstmrStmt>',
    '</Document>',
  ].join('\n');
}

interface EntryParts {
  amount?: string;
  currency?: string;
  indicator?: string;
  status?: string;
  booking?: string;
  reference?: string;
  details?: string;
  /** Elements between Sts and BookgDt's siblings that the schema puts after AcctSvcrRef (BkTxCd...). */
  after?: string;
}

function ntry(parts: EntryParts = {}): string {
  const {
    amount = '10.00',
    currency = 'GBP',
    indicator = 'CRDT',
    status = '<Sts>BOOK</Sts>',
    booking = '<BookgDt><Dt>2026-11-27</Dt></BookgDt>',
    reference = '<AcctSvcrRef>R1</AcctSvcrRef>',
    details = '',
    after = '',
  } = parts;
  const amountElement = amount === '' ? '' : `<Amt Ccy="${currency}">${amount}</Amt>`;
  const indicatorElement = indicator === '' ? '' : `<CdtDbtInd>${indicator}</CdtDbtInd>`;
  return ['<Ntry>', amountElement, indicatorElement, status, booking, reference, after, details, '</Ntry>'].filter((line) => line !== '').join('\n');
}

/** An entry as the parser gives it, with the defaults of `ntry()`; `overrides` replace fields. */
function entry(overrides: Partial<StatementEntry> = {}): StatementEntry {
  return {
    position: { line: 8, column: 1 },
    index: 0,
    bankReference: 'R1',
    accountServicerReference: 'R1',
    entryReference: null,
    transactionReferences: [],
    batch: null,
    direction: 'credit',
    reversal: false,
    bankTransactionCode: null,
    returnReason: null,
    amount: 1000,
    currency: 'GBP',
    bookingDate: '2026-11-27',
    valueDate: null,
    remittanceInformation: null,
    debtorName: null,
    debtorAccount: null,
    problem: null,
    ...overrides,
  };
}

/** A statement as the parser gives it for `camt053()`; `overrides` replace fields. */
function statement(overrides: Partial<ParsedStatement> = {}): ParsedStatement {
  return {
    format: 'camt.053',
    statementId: 'S1',
    page: { number: 1, last: true },
    electronicSequenceNumber: null,
    legalSequenceNumber: null,
    account: UK_ACCOUNT,
    currency: 'GBP',
    balances: [],
    summary: null,
    entries: [],
    ...overrides,
  };
}

describe('camt.053.001.02', () => {
  it('reads the booked entries: every reference and text, NtryRef when no AcctSvcrRef, a debit, a pending entry skipped, a batch split', async () => {
    const file = await parseStatement(createReadStream(fixture('camt053-v02.xml'), { highWaterMark: 64 }), { maxBytes: MAX });
    const common = { currency: 'GBP', bookingDate: '2026-11-27', entryReference: null, reversal: false, returnReason: null, problem: null };
    expect(file).toEqual({
      format: 'camt.053',
      statements: [
        statement({
          statementId: 'STMT-20261127-001',
          electronicSequenceNumber: '331',
          balances: [{ type: 'OPBD', amount: 1_000_000, currency: 'GBP', date: '2026-11-27', position: { line: 19, column: 7 } }],
          entries: [
            {
              ...common,
              position: { line: 25, column: 7 },
              index: 0,
              bankReference: 'NWB20261127000001',
              accountServicerReference: 'NWB20261127000001',
              transactionReferences: ['ACME-NOV-PAYROLL'],
              batch: null,
              direction: 'credit',
              bankTransactionCode: { domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT', proprietary: null },
              amount: 125000,
              valueDate: '2026-11-27',
              // The structured reference first, then the free text it used to hide.
              remittanceInformation: 'SDR261030P12 | ACME NOV PAYROLL',
              debtorName: 'Acme Payroll Ltd',
              debtorAccount: 'GB82WEST12345698765432',
            },
            {
              ...common,
              position: { line: 53, column: 7 },
              index: 1,
              bankReference: 'NTRY-0002',
              accountServicerReference: null,
              entryReference: 'NTRY-0002',
              transactionReferences: [],
              batch: null,
              direction: 'credit',
              bankTransactionCode: null,
              amount: 31045,
              valueDate: '2026-11-28',
              remittanceInformation: 'SDR261030P13 | BROWN NOV',
              debtorName: 'Brown & Sons',
              debtorAccount: '20000055555555',
            },
            {
              ...common,
              position: { line: 80, column: 7 },
              index: 2,
              bankReference: 'NWB20261127000004',
              accountServicerReference: 'NWB20261127000004',
              transactionReferences: [],
              batch: null,
              direction: 'debit',
              bankTransactionCode: null,
              amount: 50000,
              valueDate: '2026-11-27',
              remittanceInformation: 'PAYOUT PO-2611-7',
              debtorName: null,
              debtorAccount: null,
            },
            {
              ...common,
              position: { line: 105, column: 11 },
              index: 3,
              bankReference: 'NWB20261127000005/1',
              accountServicerReference: 'NWB20261127000005',
              transactionReferences: [],
              batch: { amount: 30000, part: 1, parts: 2 },
              direction: 'credit',
              bankTransactionCode: null,
              amount: 10000,
              valueDate: '2026-11-27',
              remittanceInformation: 'SDR261030P14',
              debtorName: 'Carter Ltd',
              debtorAccount: null,
            },
            {
              ...common,
              position: { line: 110, column: 11 },
              index: 4,
              bankReference: 'NWB20261127000005/2',
              accountServicerReference: 'NWB20261127000005',
              transactionReferences: [],
              batch: { amount: 30000, part: 2, parts: 2 },
              direction: 'credit',
              bankTransactionCode: null,
              amount: 20000,
              valueDate: '2026-11-27',
              remittanceInformation: 'SDR261030P15',
              debtorName: 'Dunn Ltd',
              debtorAccount: null,
            },
          ],
        }),
      ],
    });
    // The positions above are those of the start tags, counted here independently of the parser.
    const text = readFileSync(fixture('camt053-v02.xml'), 'utf8');
    const { entries, balances } = file.statements[0]!;
    expect(entries.slice(0, 3).map((parsed) => parsed.position)).toEqual([positionOf(text, '<Ntry>', 1), positionOf(text, '<Ntry>', 2), positionOf(text, '<Ntry>', 4)]);
    // The split batch points at each TxDtls: the 4th and 5th of the file.
    expect(entries.slice(3).map((parsed) => parsed.position)).toEqual([positionOf(text, '<TxDtls>', 4), positionOf(text, '<TxDtls>', 5)]);
    expect(balances[0]?.position).toEqual(positionOf(text, '<Bal>'));
  });

  it('gives the same result whatever the chunk size, down to one byte', async () => {
    const text = readFileSync(fixture('camt053-v02.xml'), 'utf8');
    const whole = await parseFile(text, text.length);
    expect(await parseFile(text, 1)).toEqual(whole);
    expect(await parseFile(text, 7)).toEqual(whole);
  });
});

describe('camt.053.001.08', () => {
  it('reads Sts/Cd, BookgDt/DtTm, Othr/Id account, Dbtr/Pty/Nm, TxDtls/Amt, character references; skips an INFO entry', async () => {
    // One-byte chunks split the two-byte é of "Café" across chunks.
    const file = await parseStatement(chunked(readFileSync(fixture('camt053-v08.xml')), 1), { maxBytes: MAX });
    expect(file).toEqual({
      format: 'camt.053',
      statements: [
        statement({
          statementId: 'BARC/2026/11/30',
          entries: [
            entry({
              position: { line: 19, column: 7 },
              bankReference: 'BARC301100001',
              accountServicerReference: 'BARC301100001',
              amount: 4210,
              bookingDate: '2026-11-30',
              valueDate: '2026-11-30',
              remittanceInformation: 'SDR261130P07',
              debtorName: 'Café René Ltd',
              debtorAccount: 'GB33BUKB20201555555555',
            }),
            entry({
              position: { line: 47, column: 7 },
              index: 1,
              bankReference: 'BARC301100003',
              accountServicerReference: 'BARC301100003',
              direction: 'debit',
              amount: 750,
              bookingDate: '2026-11-30',
              remittanceInformation: 'BANK CHARGES NOV',
            }),
          ],
        }),
      ],
    });
    // camt.053 without any balance: the integrity check says so.
    expect(statementIntegrityFindings(file.statements[0]!).map((finding) => finding.code)).toEqual(['no_balances']);
  });
});

describe('camt.054.001.02', () => {
  it('reads a notification (Ntfctn) and skips its pending entry', async () => {
    const file = await parseStatement(createReadStream(fixture('camt054-v02.xml')), { maxBytes: MAX });
    expect(file).toEqual({
      format: 'camt.054',
      statements: [
        statement({
          format: 'camt.054',
          statementId: 'NTF-88213',
          entries: [
            entry({
              position: { line: 15, column: 7 },
              bankReference: 'NWB20261127110213',
              accountServicerReference: 'NWB20261127110213',
              amount: 125000,
              valueDate: '2026-11-27',
              remittanceInformation: 'SDR261030P12',
              debtorName: 'Acme Payroll Ltd',
              debtorAccount: 'GB82WEST12345698765432',
            }),
          ],
        }),
      ],
    });
    expect(statementIntegrityFindings(file.statements[0]!)).toEqual([]);
  });
});

describe('versions and layout', () => {
  it.each(['02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12', '13'])('accepts camt.053.001.%s and camt.054 of that version', async (version) => {
    const booked = ntry({ status: Number(version) >= 4 ? '<Sts><Cd>BOOK</Cd></Sts>' : '<Sts>BOOK</Sts>' });
    expect((await parse(camt053(booked, { version }))).entries).toHaveLength(1);
    const notification = [
      `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.${version}">`,
      '<BkToCstmrDbtCdtNtfctn><Ntfctn><Id>N1</Id>',
      ACCOUNT,
      booked,
      '</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>',
    ].join('\n');
    const file = await parseFile(notification);
    expect(file.format).toBe('camt.054');
    expect(file.statements.map((parsed) => [parsed.format, parsed.statementId])).toEqual([['camt.054', 'N1']]);
  });

  it('accepts a statement with no entries', async () => {
    expect((await parse(camt053(''))).entries).toEqual([]);
  });

  it('ignores elements of other namespaces (supplementary data)', async () => {
    const extra = '<x:Note xmlns:x="urn:example:bank"><x:Id>not the statement id</x:Id></x:Note>';
    const parsed = await parse(camt053(`${extra}\n${ntry()}`));
    expect(parsed.statementId).toBe('S1');
    expect(parsed.entries).toHaveLength(1);
  });

  it('reads statement paths only inside the Stmt, not in a sibling after it', async () => {
    const text = camt053(ntry()).replace('</Stmt>', '</Stmt>\n<x:Extra xmlns:x="urn:example:bank"><x:Id>other</x:Id></x:Extra>\n<GrpHdr><Id>not it</Id></GrpHdr>');
    expect((await parse(text)).statementId).toBe('S1');
  });

  it('reads namespace prefixes like the default namespace', async () => {
    const prefixed = camt053(ntry())
      .replace('<Document xmlns=', '<c:Document xmlns:c=')
      .replace(/<(\/?)(?!\?|c:Document)([A-Za-z]+)/g, '<$1c:$2');
    expect(prefixed).toContain('<c:Ntry>');
    expect((await parse(prefixed)).entries).toEqual([entry()]);
  });

  it('stops reading the source when it refuses the file', async () => {
    let closed = false;
    async function* source(): AsyncGenerator<string> {
      try {
        yield camt053(ntry(), { account: '<Acct><Id><IBAN>GB28NWBK60161331926819</IBAN></Id><Ccy>GBP</Ccy></Acct>' });
        yield* Array.from({ length: 1000 }, () => '<!-- more -->');
      } finally {
        closed = true;
      }
    }
    expect((await rejection(parseStatement(Readable.from(source()), { maxBytes: MAX }))).detail).toBe(
      'account IBAN "GB28NWBK60161331926819" fails its checksum (line 7, column 11)',
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(true);
  });

  it('refuses camt versions outside 02 to 13, and other messages', async () => {
    const v01 = camt053(ntry(), { version: '01' });
    expect((await rejection(parseFile(v01))).detail).toBe('camt.053.001.01 is not a supported version (02 to 13) (line 2, column 1)');
    const camt052 = v01.replace('camt.053.001.01', 'camt.052.001.02');
    expect((await rejection(parseFile(camt052))).detail).toBe(
      'not a camt.053 or camt.054 document: the root element is Document in namespace urn:iso:std:iso:20022:tech:xsd:camt.052.001.02 (line 2, column 1)',
    );
    expect((await rejection(parseFile('<Document><Stmt/></Document>'))).detail).toBe(
      'not a camt.053 or camt.054 document: the root element is Document without a namespace (line 1, column 1)',
    );
  });

  it('refuses a camt.053 namespace around a notification group', async () => {
    const text = camt053(ntry()).replace(/BkToCstmrStmt/g, 'BkToCstmrDbtCdtNtfctn');
    const error = await rejection(parseFile(text));
    expect(error.detail).toBe('expected BkToCstmrStmt under Document, found BkToCstmrDbtCdtNtfctn (line 3, column 1)');
    expect(error.position).toEqual(positionOf(text, '<BkToCstmrDbtCdtNtfctn>'));
  });

  it('refuses a document without a statement', async () => {
    const text = camt053('').replace(/<Stmt>[\s\S]*<\/Stmt>/, '');
    expect((await rejection(parseFile(text))).detail).toBe('no Stmt element in the document');
  });

  it('refuses a statement without Id or without Acct', async () => {
    expect((await rejection(parseFile(camt053('', { id: '' })))).detail).toBe('Stmt is missing Id (line 5, column 1)');
    expect((await rejection(parseFile(camt053('', { account: '' })))).detail).toBe('Stmt is missing Acct (line 5, column 1)');
  });
});

describe('several statements in a file', () => {
  it('gives every Stmt, in order, each with its own account, currency, pages and entries', async () => {
    const second = '<Acct><Id><Othr><Id>20000055779911</Id></Othr></Id><Ccy>EUR</Ccy></Acct>';
    const text = camt053(`${ntry()}\n</Stmt>\n<Stmt>\n<Id>S2</Id>\n${second}\n${ntry({ currency: 'EUR', amount: '5.00' })}\n${ntry({ currency: 'EUR', amount: '6.00' })}`);
    const file = await parseFile(text);
    expect(file.format).toBe('camt.053');
    expect(file.statements).toEqual([
      statement({ entries: [entry()] }),
      statement({
        statementId: 'S2',
        account: { sortCode: '20-00-00', accountNumber: '55779911' },
        currency: 'EUR',
        entries: [
          entry({ position: positionOf(text, '<Ntry>', 2), currency: 'EUR', amount: 500 }),
          // The same AcctSvcrRef again: both kept (identity is decided by the import, not here); index per statement.
          entry({ position: positionOf(text, '<Ntry>', 3), index: 1, currency: 'EUR', amount: 600 }),
        ],
      }),
    ]);
  });

  it('gives every Ntfctn of a notification', async () => {
    const text = [
      '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn>',
      `<Ntfctn><Id>N1</Id>${ACCOUNT}</Ntfctn>`,
      `<Ntfctn><Id>N2</Id>${ACCOUNT}${ntry({ status: '<Sts><Cd>BOOK</Cd></Sts>' })}</Ntfctn>`,
      '</BkToCstmrDbtCdtNtfctn></Document>',
    ].join('\n');
    const file = await parseFile(text);
    expect(file.statements.map((parsed) => [parsed.statementId, parsed.entries.length])).toEqual([
      ['N1', 0],
      ['N2', 1],
    ]);
  });

  it('keeps an AcctSvcrRef reused within a statement on both entries', async () => {
    const parsed = await parse(camt053(`${ntry()}\n${ntry({ amount: '20.00' })}`));
    expect(parsed.entries.map(({ bankReference, accountServicerReference, amount, problem }) => [bankReference, accountServicerReference, amount, problem])).toEqual([
      ['R1', 'R1', 1000, null],
      ['R1', 'R1', 2000, null],
    ]);
  });
});

describe('pagination and sequence numbers', () => {
  const pagination = (element: string, page: string, last: string) => `<${element}><PgNb>${page}</PgNb><LastPgInd>${last}</LastPgInd></${element}>`;

  it('is page 1 of 1 without pagination', async () => {
    expect((await parse(camt053(''))).page).toEqual({ number: 1, last: true });
  });

  it('reads GrpHdr/MsgPgntn, for every statement of the message', async () => {
    const header = `<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-11-27T18:00:00</CreDtTm>${pagination('MsgPgntn', '2', 'false')}</GrpHdr>`;
    expect((await parse(camt053('', { header }))).page).toEqual({ number: 2, last: false });
    const last = `<GrpHdr><MsgId>M1</MsgId>${pagination('MsgPgntn', '3', '1')}</GrpHdr>`;
    expect((await parse(camt053('', { header: last }))).page).toEqual({ number: 3, last: true });
  });

  it('reads Stmt/StmtPgntn (v04+), which wins over the message pagination, and ElctrncSeqNb and LglSeqNb', async () => {
    const header = `<GrpHdr><MsgId>M1</MsgId>${pagination('MsgPgntn', '1', 'true')}</GrpHdr>`;
    const id = `<Id>S1</Id>${pagination('StmtPgntn', '2', 'true')}<ElctrncSeqNb>0041</ElctrncSeqNb><LglSeqNb>7</LglSeqNb>`;
    const parsed = await parse(camt053('', { version: '08', header, id }));
    expect(parsed).toEqual(statement({ page: { number: 2, last: true }, electronicSequenceNumber: '0041', legalSequenceNumber: '7' }));
  });

  it('reads Ntfctn/NtfctnPgntn', async () => {
    const text = [
      '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.04"><BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>M</MsgId></GrpHdr>',
      `<Ntfctn><Id>N1</Id>${pagination('NtfctnPgntn', '4', 'false')}${ACCOUNT}</Ntfctn>`,
      '</BkToCstmrDbtCdtNtfctn></Document>',
    ].join('\n');
    expect((await parse(text)).page).toEqual({ number: 4, last: false });
  });

  it('refuses pagination it cannot read', async () => {
    const id = (page: string, last: string) => `<Id>S1</Id>${pagination('StmtPgntn', page, last)}`;
    expect((await rejection(parseFile(camt053('', { version: '08', id: id('x', 'true') })))).detail).toBe('StmtPgntn/PgNb "x" is not a page number (line 6, column 12)');
    expect((await rejection(parseFile(camt053('', { version: '08', id: id('1', 'yes') })))).detail).toBe(
      'StmtPgntn/LastPgInd "yes" is neither true nor false (line 6, column 12)',
    );
    const header = `<GrpHdr><MsgId>M1</MsgId><MsgPgntn><PgNb>1</PgNb></MsgPgntn></GrpHdr>`;
    expect((await rejection(parseFile(camt053('', { header })))).detail).toBe('MsgPgntn/LastPgInd is missing (line 4, column 26)');
  });
});

describe('an account without Ccy (optional in the schema)', () => {
  it('has no currency; its entries keep their own Amt/@Ccy, its balances theirs', async () => {
    const account = '<Acct><Id><IBAN>GB29NWBK60161331926819</IBAN></Id></Acct>';
    const balance = '<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-26</Dt></Dt></Bal>';
    const text = camt053(`${balance}\n${ntry({ currency: 'EUR' })}\n${ntry({ currency: 'GBP', reference: '<AcctSvcrRef>R2</AcctSvcrRef>' })}`, { account });
    const parsed = await parse(text);
    expect(parsed.currency).toBeNull();
    expect(parsed.balances).toEqual([{ type: 'OPBD', amount: 100, currency: 'EUR', date: '2026-11-26', position: positionOf(text, '<Bal>') }]);
    // No account currency to differ from: both entries stand as written.
    expect(parsed.entries.map(({ currency, amount, problem }) => [currency, amount, problem])).toEqual([
      ['EUR', 1000, null],
      ['GBP', 1000, null],
    ]);
  });
});

describe('an entry that cannot be used is kept, with its problem; the rest of the file is read', () => {
  async function only(body: string, options: Parameters<typeof camt053>[1] = {}): Promise<StatementEntry> {
    const parsed = await parse(camt053(`${body}\n${ntry({ reference: '<AcctSvcrRef>GOOD</AcctSvcrRef>' })}`, options));
    expect(parsed.entries).toHaveLength(2);
    expect(parsed.entries[1]).toMatchObject({ bankReference: 'GOOD', problem: null, index: 1 });
    return parsed.entries[0]!;
  }

  it.each([
    ['a zero amount', { amount: '0.00' }, { amount: 0 }, "the entry's amount is zero"],
    ['an amount in another currency than the account', { currency: 'EUR' }, { amount: 1000, currency: 'EUR' }, "the entry's currency EUR differs from the account's GBP"],
    ['a negative amount', { amount: '-5' }, { amount: 0 }, 'amount "-5" is not a positive decimal number'],
    ['an exponent', { amount: '1e3' }, { amount: 0 }, 'amount "1e3" is not a positive decimal number'],
    ['a fraction of a penny', { amount: '10.005' }, { amount: 0 }, 'amount "10.005" has more decimal places than GBP allows (at most 2 decimal places)'],
    ['an amount past 15 digits', { amount: '10000000000000.00' }, { amount: 0 }, 'amount "10000000000000.00" GBP is too large'],
    [
      'a currency not supported',
      { currency: 'XAU' },
      { amount: 0, currency: 'XAU' },
      'the entry\'s currency XAU differs from the account\'s GBP; currency "XAU" is not supported',
    ],
    ['no Amt', { amount: '' }, { amount: 0 }, 'Ntry is missing Amt'],
    ['no CdtDbtInd', { indicator: '' }, { amount: 1000, direction: 'credit' }, 'Ntry is missing CdtDbtInd'],
    ['a CdtDbtInd that is neither CRDT nor DBIT', { indicator: 'CR' }, { amount: 1000, direction: 'credit' }, 'CdtDbtInd "CR" is neither CRDT nor DBIT'],
    [
      'an impossible booking date',
      { booking: '<BookgDt><Dt>2026-02-30</Dt></BookgDt>' },
      { amount: 1000, bookingDate: '' },
      'BookgDt "2026-02-30" is not a valid date (YYYY-MM-DD)',
    ],
    ['no status', { status: '' }, { amount: 1000 }, 'Ntry is missing Sts'],
  ] as const)('%s', async (_, parts, fields, problem) => {
    expect(await only(ntry(parts))).toEqual(entry({ ...fields, problem }));
  });

  it('reads an amount without Ccy attribute in the account currency', async () => {
    expect(await only(ntry().replace(' Ccy="GBP"', ''))).toEqual(entry({ problem: 'Ntry/Amt has no Ccy attribute' }));
  });

  it('accepts extra decimal places that are zeros ("4106.910" GBP is 4106.91)', async () => {
    expect(await only(ntry({ amount: '4106.910' }))).toEqual(entry({ amount: 410691 }));
    const yen = await parse(camt053(ntry({ amount: '1250.000', currency: 'JPY' }), { account: ACCOUNT.replace('GBP', 'JPY') }));
    expect(yen.entries).toEqual([entry({ amount: 1250, currency: 'JPY' })]);
  });

  it('dates an entry without a usable booking date by its value date, else the statement, else the message', async () => {
    const missing = ntry({ booking: '' });
    expect(await only(ntry({ booking: '<ValDt><Dt>2026-11-28</Dt></ValDt>' }).replace('<ValDt>', '<BookgDt><Dt>2026-13-01</Dt></BookgDt><ValDt>'))).toMatchObject({
      bookingDate: '2026-11-28',
      valueDate: '2026-11-28',
      problem: 'BookgDt "2026-13-01" is not a valid date (YYYY-MM-DD)',
    });
    const statementDates = '<Id>S1</Id><CreDtTm>2026-11-29T22:00:00</CreDtTm><FrToDt><FrDtTm>2026-11-26T00:00:00</FrDtTm><ToDtTm>2026-11-26T23:59:59</ToDtTm></FrToDt>';
    expect(await only(missing, { id: statementDates })).toMatchObject({ bookingDate: '2026-11-26', problem: 'Ntry is missing BookgDt' });
    expect(await only(missing, { id: '<Id>S1</Id><CreDtTm>2026-11-29T22:00:00</CreDtTm>' })).toMatchObject({ bookingDate: '2026-11-29' });
    expect(await only(missing, { header: '<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-11-30T06:00:00Z</CreDtTm></GrpHdr>' })).toMatchObject({ bookingDate: '2026-11-30' });
    expect(await only(missing)).toMatchObject({ bookingDate: '' });
  });

  it('keeps an impossible value date as a problem, without the date', async () => {
    const parts = ntry().replace('</BookgDt>', '</BookgDt><ValDt><Dt>2026-04-31</Dt></ValDt>');
    expect(await only(parts)).toEqual(entry({ valueDate: null, problem: 'ValDt "2026-04-31" is not a valid date (YYYY-MM-DD)' }));
  });

  it('names the entry by NtryRef, else by its place, when AcctSvcrRef is missing', async () => {
    const parsed = await parse(camt053(`${ntry({ reference: '<NtryRef>E1</NtryRef>' })}\n${ntry({ reference: '' })}`));
    expect(
      parsed.entries.map(({ bankReference, accountServicerReference, entryReference, problem }) => [bankReference, accountServicerReference, entryReference, problem]),
    ).toEqual([
      ['E1', null, 'E1', null],
      ['#2', null, null, null],
    ]);
  });

  it('joins several problems of one entry', async () => {
    expect((await only(ntry({ amount: '0', indicator: 'X', booking: '' }))).problem).toBe(
      'the entry\'s amount is zero; CdtDbtInd "X" is neither CRDT nor DBIT; Ntry is missing BookgDt',
    );
  });

  it('does not check a pending entry, which is not imported', async () => {
    const pending = ntry({ status: '<Sts>PDNG</Sts>', amount: '0.00', currency: 'EUR' });
    expect((await parse(camt053(`${pending}\n${ntry()}`))).entries.map((parsed) => parsed.bankReference)).toEqual(['R1']);
  });

  it('refuses an entry before the account it belongs to: the file is out of order', async () => {
    const text = camt053('', { account: `${ntry()}\n${ACCOUNT}` });
    expect((await rejection(parseFile(text))).detail).toBe(`Ntry before the Stmt/Acct it belongs to (line ${positionOf(text, '<Ntry>').line}, column 1)`);
  });
});

describe('batch bookings', () => {
  const tx = (inner: string) => `<TxDtls>${inner}</TxDtls>`;
  const amount = (value: string, currency = 'GBP') => `<Amt Ccy="${currency}">${value}</Amt>`;
  const batch = (total: string, ...transactions: string[]) =>
    ntry({
      amount: total,
      details: `<NtryDtls>\n<Btch><NbOfTxs>${transactions.length}</NbOfTxs></Btch>\n${transactions.join('\n')}\n</NtryDtls>\n<AddtlNtryInf>BATCH 7</AddtlNtryInf>`,
    });

  it('splits a batch whose TxDtls all have amounts into one entry per TxDtls, each with the lump and its place', async () => {
    const text = camt053(
      batch(
        '30.00',
        tx(`<Refs><AcctSvcrRef>T1</AcctSvcrRef><EndToEndId>E1</EndToEndId></Refs>${amount('10.00')}<RmtInf><Ustrd>SDR1</Ustrd></RmtInf>`),
        tx(`<Refs><EndToEndId>E2</EndToEndId></Refs>${amount('20.00')}<RltdPties><Dbtr><Nm>Dunn</Nm></Dbtr></RltdPties><RmtInf><Ustrd>SDR2</Ustrd></RmtInf>`),
      ),
      { version: '04' },
    );
    expect((await parse(text)).entries).toEqual([
      entry({
        position: positionOf(text, '<TxDtls>', 1),
        bankReference: 'R1/1',
        accountServicerReference: 'T1',
        transactionReferences: ['E1'],
        batch: { amount: 3000, part: 1, parts: 2 },
        amount: 1000,
        remittanceInformation: 'SDR1 | BATCH 7',
      }),
      entry({
        position: positionOf(text, '<TxDtls>', 2),
        index: 1,
        bankReference: 'R1/2',
        transactionReferences: ['E2'],
        batch: { amount: 3000, part: 2, parts: 2 },
        amount: 2000,
        remittanceInformation: 'SDR2 | BATCH 7',
        debtorName: 'Dunn',
      }),
    ]);
  });

  it('splits a batch of credits and debits whose signed total is the lump (v02 amounts in AmtDtls/TxAmt)', async () => {
    const v02 = (value: string) => `<AmtDtls><TxAmt>${amount(value)}</TxAmt></AmtDtls>`;
    const text = camt053(batch('15.00', tx(v02('20.00')), tx(`${v02('5.00')}`).replace('<AmtDtls>', '<AmtDtls>')));
    // v02 has no TxDtls/CdtDbtInd: every part goes the entry's way, so 20 + 5 is not 15.
    expect((await parse(text)).entries).toEqual([
      entry({ amount: 1500, remittanceInformation: 'BATCH 7', problem: 'the TxDtls amounts of the batch-booked entry add up to £25.00, not its Amt £15.00' }),
    ]);
    const v04 = camt053(batch('15.00', tx(`${amount('20.00')}<CdtDbtInd>CRDT</CdtDbtInd>`), tx(`${amount('5.00')}<CdtDbtInd>DBIT</CdtDbtInd>`)), { version: '04' });
    expect((await parse(v04)).entries.map(({ direction, amount: minor, batch: part }) => [direction, minor, part])).toEqual([
      ['credit', 2000, { amount: 1500, part: 1, parts: 2 }],
      ['debit', 500, { amount: 1500, part: 2, parts: 2 }],
    ]);
  });

  it('keeps the lump, with a problem, when the TxDtls amounts do not add up or cannot be read', async () => {
    const mismatch = camt053(batch('30.00', tx(amount('10.00')), tx(amount('10.00'))), { version: '04' });
    expect((await parse(mismatch)).entries).toEqual([
      entry({ amount: 3000, remittanceInformation: 'BATCH 7', problem: 'the TxDtls amounts of the batch-booked entry add up to £20.00, not its Amt £30.00' }),
    ]);
    const unreadable = camt053(batch('30.00', tx(amount('10.00')), tx(amount('20.001'))), { version: '04' });
    expect((await parse(unreadable)).entries[0]?.problem).toBe(
      'TxDtls 2 of the batch-booked entry: amount "20.001" has more decimal places than GBP allows (at most 2 decimal places)',
    );
  });

  it('keeps one lump entry when the TxDtls have no amounts, joining all their texts and references', async () => {
    const text = camt053(
      batch(
        '30.00',
        tx('<Refs><EndToEndId>E1</EndToEndId><TxId>T1</TxId></Refs><RltdPties><Dbtr><Nm>Same Ltd</Nm></Dbtr></RltdPties><RmtInf><Ustrd>SDR1</Ustrd></RmtInf>'),
        tx('<Refs><EndToEndId>E2</EndToEndId><TxId>T1</TxId></Refs><RltdPties><Dbtr><Nm>Same Ltd</Nm></Dbtr></RltdPties><RmtInf><Ustrd>SDR2</Ustrd></RmtInf>'),
      ),
      { version: '04' },
    );
    expect((await parse(text)).entries).toEqual([
      entry({ amount: 3000, transactionReferences: ['E1', 'T1', 'E2'], remittanceInformation: 'SDR1 | SDR2 | BATCH 7', debtorName: 'Same Ltd' }),
    ]);
  });

  it('keeps one lump entry when only some TxDtls have amounts, or when they are in another currency', async () => {
    const mixed = camt053(batch('30.00', tx(`${amount('10.00')}<RltdPties><Dbtr><Nm>A</Nm></Dbtr></RltdPties>`), tx('<RltdPties><Dbtr><Nm>B</Nm></Dbtr></RltdPties>')), {
      version: '04',
    });
    // Two debtors: the lump names neither.
    expect((await parse(mixed)).entries).toEqual([entry({ amount: 3000, remittanceInformation: 'BATCH 7' })]);
    const foreign = camt053(batch('30.00', tx(amount('10.00', 'EUR')), tx(amount('25.00', 'EUR'))), { version: '04' });
    expect((await parse(foreign)).entries).toEqual([entry({ amount: 3000, remittanceInformation: 'BATCH 7' })]);
  });
});

describe('what the payer and the bank wrote', () => {
  it('joins every Strd reference, every Ustrd, AddtlTxInf, then AddtlNtryInf', async () => {
    const details = [
      '<NtryDtls><TxDtls>',
      '<RmtInf><Ustrd>FIRST LINE</Ustrd><Ustrd>SECOND LINE</Ustrd>',
      '<Strd><CdtrRefInf><Ref>RF18539007547034</Ref></CdtrRefInf></Strd>',
      '<Strd><CdtrRefInf><Ref>SDR261030P12</Ref></CdtrRefInf></Strd></RmtInf>',
      '<AddtlTxInf>PAYROLL NOV</AddtlTxInf>',
      '</TxDtls></NtryDtls>',
      '<AddtlNtryInf>CREDIT TRANSFER</AddtlNtryInf>',
    ].join('');
    expect((await parse(camt053(ntry({ details })))).entries[0]?.remittanceInformation).toBe(
      'RF18539007547034 | SDR261030P12 | FIRST LINE | SECOND LINE | PAYROLL NOV | CREDIT TRANSFER',
    );
    expect((await parse(camt053(ntry({ details: '<AddtlNtryInf>ONLY THE BANK</AddtlNtryInf>' })))).entries[0]?.remittanceInformation).toBe('ONLY THE BANK');
  });

  it('reads the transaction references in order, without duplicates, NOTPROVIDED and the account servicer reference', async () => {
    const refs = [
      '<Refs><MsgId>M</MsgId><AcctSvcrRef>BANK</AcctSvcrRef><PmtInfId>P</PmtInfId><InstrId>I</InstrId><EndToEndId>NOTPROVIDED</EndToEndId>',
      '<UETR>8a562c67-ca16-48ba-b074-65581be6f001</UETR><TxId>M</TxId><MndtId>MD</MndtId><ChqNb>C</ChqNb><ClrSysRef>CS</ClrSysRef>',
      '<Prtry><Tp>04</Tp><Ref>PR</Ref></Prtry></Refs>',
    ].join('');
    const parsed = await parse(camt053(ntry({ details: `<NtryDtls><TxDtls>${refs}</TxDtls></NtryDtls>` }), { version: '08' }));
    expect(parsed.entries[0]).toEqual(entry({ transactionReferences: ['M', 'P', 'I', '8a562c67-ca16-48ba-b074-65581be6f001', 'MD', 'C', 'CS', 'PR'] }));
  });
});

describe('reversals, returns and bank transaction codes', () => {
  const code = '<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn><Prtry><Cd>NTRF+166</Cd><Issr>DK</Issr></Prtry></BkTxCd>';

  it('reads RvslInd (true or 1) and the entry bank transaction code', async () => {
    const reversed = (value: string) => ntry({ indicator: 'DBIT' }).replace('<Sts>', `<RvslInd>${value}</RvslInd><Sts>`);
    const parsed = await parse(camt053([reversed('true'), reversed('1'), reversed('false'), ntry({ after: code })].join('\n')));
    expect(parsed.entries.map(({ direction, reversal }) => [direction, reversal])).toEqual([
      ['debit', true],
      ['debit', true],
      ['debit', false],
      ['credit', false],
    ]);
    expect(parsed.entries[3]?.bankTransactionCode).toEqual({ domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT', proprietary: 'NTRF+166' });
  });

  it("takes the TxDtls bank transaction code when the entry has none, never over the entry's", async () => {
    const details = '<NtryDtls><TxDtls><BkTxCd><Prtry><Cd>RETURN</Cd></Prtry></BkTxCd></TxDtls></NtryDtls>';
    expect((await parse(camt053(ntry({ details })))).entries[0]?.bankTransactionCode).toEqual({ domain: null, family: null, subFamily: null, proprietary: 'RETURN' });
    expect((await parse(camt053(ntry({ after: code, details })))).entries[0]?.bankTransactionCode?.proprietary).toBe('NTRF+166');
  });

  it.each([
    ['Rsn/Cd', '<RtrInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>closed</AddtlInf></RtrInf>', 'AC04'],
    ['Rsn/Prtry', '<RtrInf><Rsn><Prtry>NARR</Prtry></Rsn></RtrInf>', 'NARR'],
    ['no reason', '<RtrInf><AddtlInf>returned</AddtlInf></RtrInf>', ''],
    ['no RtrInf', '', null],
  ])('gives the return reason of TxDtls/RtrInf: %s', async (_, returnInformation, reason) => {
    for (const version of ['02', '08']) {
      const details = `<NtryDtls><TxDtls><Refs><EndToEndId>E2E-1</EndToEndId></Refs>${returnInformation}</TxDtls></NtryDtls>`;
      expect((await parse(camt053(ntry({ details }), { version }))).entries[0]).toEqual(entry({ transactionReferences: ['E2E-1'], returnReason: reason }));
    }
  });
});

describe('balances and totals', () => {
  const bal = (type: string, value: string, indicator = 'CRDT', date = '<Dt><Dt>2026-11-27</Dt></Dt>', currency = 'GBP') =>
    `<Bal><Tp><CdOrPrtry><Cd>${type}</Cd></CdOrPrtry></Tp><Amt Ccy="${currency}">${value}</Amt><CdtDbtInd>${indicator}</CdtDbtInd>${date}</Bal>`;

  it('reads every balance, signed, with its date or date-time', async () => {
    const text = camt053(
      [bal('OPBD', '10.00', 'DBIT'), bal('CLBD', '0', 'DBIT', '<Dt><DtTm>2026-11-27T23:59:00Z</DtTm></Dt>'), bal('CLAV', '4106.910', 'CRDT', '')].join('\n'),
    );
    expect((await parse(text)).balances.map(({ type, amount, currency, date }) => [type, amount, currency, date])).toEqual([
      ['OPBD', -1000, 'GBP', '2026-11-27'],
      ['CLBD', 0, 'GBP', '2026-11-27'],
      ['CLAV', 410691, 'GBP', null],
    ]);
    const proprietary = camt053(bal('OPBD', '1.00').replace('<Cd>OPBD</Cd>', '<Prtry>BOOKED</Prtry>'));
    expect((await parse(proprietary)).balances[0]?.type).toBe('BOOKED');
  });

  it('refuses the file for a balance it cannot read: one past 15 digits, another currency, a broken amount, date or sign', async () => {
    const refused = async (balance: string) => (await rejection(parseFile(camt053(balance)))).detail.replace(/ \(line .*$/, '');
    expect(await refused(bal('OPBD', '10000000000000.00'))).toBe('balance OPBD: amount "10000000000000.00" GBP is too large');
    expect(await refused(bal('OPBD', '1.00', 'CRDT', '', 'EUR'))).toBe('balance OPBD is in EUR, the account in GBP');
    expect(await refused(bal('OPBD', '-1.00'))).toBe('balance OPBD: amount "-1.00" is not a positive decimal number');
    expect(await refused(bal('OPBD', '1.00', 'C'))).toBe('balance OPBD: CdtDbtInd "C" is neither CRDT nor DBIT');
    expect(await refused(bal('OPBD', '1.00', 'CRDT', '<Dt><Dt>2026-02-29</Dt></Dt>'))).toBe('balance OPBD date "2026-02-29" is not a valid date (YYYY-MM-DD)');
    expect(await refused(bal('OPBD', '1.00', 'CRDT', '', 'XAU'))).toBe('currency "XAU" is not supported');
    expect(await refused(bal('OPBD', '1.00').replace(' Ccy="GBP"', ''))).toBe('balance OPBD: Amt has no Ccy attribute');
  });

  it('reads TxsSummry in v02 names (TtlNetNtryAmt + CdtDbtInd)', async () => {
    const summary = [
      '<TxsSummry>',
      '<TtlNtries><NbOfNtries>3</NbOfNtries><Sum>30.000</Sum><TtlNetNtryAmt>10</TtlNetNtryAmt><CdtDbtInd>DBIT</CdtDbtInd></TtlNtries>',
      '<TtlCdtNtries><NbOfNtries>1</NbOfNtries><Sum>10</Sum></TtlCdtNtries>',
      '<TtlDbtNtries><NbOfNtries>2</NbOfNtries><Sum>20.00</Sum></TtlDbtNtries>',
      '</TxsSummry>',
    ].join('');
    expect((await parse(camt053(`${bal('OPBD', '0')}${summary}`))).summary).toEqual({
      entries: { count: 3, sum: 3000, net: -1000 },
      credits: { count: 1, sum: 1000 },
      debits: { count: 2, sum: 2000 },
    });
  });

  it('reads TxsSummry in v04+ names (TtlNetNtry/Amt + CdtDbtInd), and what is missing as null', async () => {
    const summary =
      '<TxsSummry><TtlNtries><NbOfNtries>2</NbOfNtries><TtlNetNtry><Amt>5.5</Amt><CdtDbtInd>CRDT</CdtDbtInd></TtlNetNtry></TtlNtries><TtlCdtNtries><Sum>5.50</Sum></TtlCdtNtries></TxsSummry>';
    expect((await parse(camt053(`${bal('OPBD', '0')}${summary}`, { version: '08' }))).summary).toEqual({
      entries: { count: 2, sum: null, net: 550 },
      credits: { count: null, sum: 550 },
      debits: null,
    });
  });

  it('refuses totals it cannot read', async () => {
    const summary = (inner: string) => camt053(`<TxsSummry><TtlNtries>${inner}</TtlNtries></TxsSummry>`);
    expect((await rejection(parseFile(summary('<NbOfNtries>two</NbOfNtries>')))).detail).toMatch(/^TxsSummry\/TtlNtries\/NbOfNtries "two" is not a number of entries/);
    expect((await rejection(parseFile(summary('<Sum>1.001</Sum>')))).detail).toMatch(/^TxsSummry\/TtlNtries\/Sum: amount "1.001" has more decimal places/);
  });
});

describe('a business application header envelope', () => {
  const document = camt053(ntry()).replace('<?xml version="1.0" encoding="UTF-8"?>\n', '');
  const appHdr = (version: string) =>
    `<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.${version}"><Fr><FIId><FinInstnId><BICFI>NWBKGB2L</BICFI></FinInstnId></FIId></Fr>` +
    '<To><FIId><FinInstnId><BICFI>ABCDGB2L</BICFI></FinInstnId></FIId></To><BizMsgIdr>B1</BizMsgIdr><MsgDefIdr>camt.053.001.02</MsgDefIdr>' +
    '<CreDt>2026-11-27T18:00:00Z</CreDt></AppHdr>';

  it.each([
    ['BizMsgEnvlp', '<BizMsgEnvlp>', '</BizMsgEnvlp>', '02'],
    ['a SWIFT Envelope', '<Envelope xmlns="urn:swift:xsd:envelope">', '</Envelope>', '02'],
    ['a Message, nested', '<Message xmlns="urn:bank:message"><Body>', '</Body></Message>', '03'],
  ])('finds the camt Document inside %s', async (_, open, close, version) => {
    const text = `<?xml version="1.0" encoding="UTF-8"?>\n${open}${appHdr(version)}\n${document}${close}`;
    const file = await parseFile(text);
    expect(file.statements).toEqual([statement({ entries: [entry({ position: positionOf(text, '<Ntry>') })] })]);
  });

  it('reads only the first camt Document', async () => {
    const second = document.replace('<Id>S1</Id>', '<Id>S2</Id>');
    const file = await parseFile(`<BizMsgEnvlp>${appHdr('02')}${document}${second}</BizMsgEnvlp>`);
    expect(file.statements.map((parsed) => parsed.statementId)).toEqual(['S1']);
  });

  it('refuses an envelope without a camt Document, or with an unsupported version in it', async () => {
    const error = await rejection(parseFile(`<BizMsgEnvlp>${appHdr('02')}<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"/></BizMsgEnvlp>`));
    expect(error.detail).toBe(
      'not a camt.053 or camt.054 document: the root element is BizMsgEnvlp without a namespace, and no camt.053 or camt.054 Document is inside it (line 1, column 1)',
    );
    const old = await rejection(parseFile(`<BizMsgEnvlp>${appHdr('02')}${document.replace('camt.053.001.02', 'camt.053.001.01')}</BizMsgEnvlp>`));
    expect(old.detail).toMatch(/^camt\.053\.001\.01 is not a supported version \(02 to 13\) \(line 1, column \d+\)$/);
  });

  it('wraps a bank sample like SWIFT CBPR+ does (our envelope around the PostFinance camt.054)', async () => {
    const sample = readFileSync(fixture('public/postfinance-camt054-v08.xml'), 'utf8').replace(/^<\?xml[^>]*>\n/, '');
    const wrapped = `<?xml version="1.0" encoding="UTF-8"?>\n<Envelope xmlns="urn:swift:xsd:envelope">\n${appHdr('02').replace('camt.053.001.02', 'camt.054.001.08')}\n${sample}</Envelope>\n`;
    const plain = await parseStatement(createReadStream(fixture('public/postfinance-camt054-v08.xml')), { maxBytes: MAX });
    const enveloped = await parseFile(wrapped);
    const withoutPositions = (file: ParsedStatementFile) => JSON.parse(JSON.stringify(file, (key, value: unknown) => (key === 'position' ? undefined : value))) as unknown;
    expect(withoutPositions(enveloped)).toEqual(withoutPositions(plain));
  });
});

describe('the encoding the XML declaration names', () => {
  const text = (encoding: string) =>
    camt053(ntry({ details: '<NtryDtls><TxDtls><RltdPties><Dbtr><Nm>Café Müller</Nm></Dbtr></RltdPties></TxDtls></NtryDtls>' })).replace('encoding="UTF-8"', encoding);

  it.each([
    ['ISO-8859-1', 'encoding="ISO-8859-1"', 'latin1'],
    ['latin1, in single quotes', "encoding='latin1'", 'latin1'],
    ['windows-1252', 'encoding="windows-1252"', 'latin1'],
    ['ISO-8859-15', 'encoding="iso-8859-15"', 'latin1'],
    ['UTF-8 with a byte-order mark', 'encoding="UTF-8"', 'utf8'],
  ] as const)('decodes %s', async (_, declaration, bytes) => {
    const body = Buffer.from(text(declaration), bytes);
    const withBom = declaration === 'encoding="UTF-8"' ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : body;
    expect((await parse(withBom, 5)).entries[0]?.debtorName).toBe('Café Müller');
  });

  it("decodes windows-1252's and ISO-8859-15's own characters", async () => {
    const euro = (declaration: string, byte: number) => {
      const bytes = Buffer.from(
        camt053(ntry({ details: '<NtryDtls><TxDtls><RmtInf><Ustrd>X</Ustrd></RmtInf></TxDtls></NtryDtls>' })).replace('encoding="UTF-8"', declaration),
        'latin1',
      );
      const at = bytes.indexOf('<Ustrd>X') + '<Ustrd>'.length;
      bytes[at] = byte;
      return bytes;
    };
    expect((await parse(euro('encoding="cp1252"', 0x80))).entries[0]?.remittanceInformation).toBe('€');
    expect((await parse(euro('encoding="windows-1252"', 0x93))).entries[0]?.remittanceInformation).toBe('“');
    expect((await parse(euro('encoding="ISO-8859-15"', 0xa4))).entries[0]?.remittanceInformation).toBe('€');
    expect((await parse(euro('encoding="ISO-8859-1"', 0xa4))).entries[0]?.remittanceInformation).toBe('¤');
  });

  it('reads US-ASCII, and refuses a byte past it', async () => {
    expect((await parse(Buffer.from(camt053(ntry()).replace('UTF-8', 'US-ASCII'), 'latin1'))).entries).toHaveLength(1);
    expect((await rejection(parseFile(Buffer.from(text('encoding="US-ASCII"'), 'latin1')))).detail).toBe('statement file declares US-ASCII but holds the byte 0xE9');
  });

  it('refuses bytes that are not UTF-8 when the declaration says UTF-8 or says nothing', async () => {
    expect((await rejection(parseFile(Buffer.from(text('encoding="UTF-8"'), 'latin1'), 50))).detail).toBe('statement file is not valid UTF-8 text');
    expect((await rejection(parseFile(Buffer.from(text('').replace('<?xml version="1.0" ?>', ''), 'latin1'), 50))).detail).toBe('statement file is not valid UTF-8 text');
    expect((await rejection(parseFile(Buffer.from(text('standalone="yes"'), 'latin1'), 50))).detail).toBe('statement file is not valid UTF-8 text');
  });

  it('refuses an encoding it does not read', async () => {
    expect((await rejection(parseFile(Buffer.from(text('encoding="EBCDIC-US"'), 'latin1')))).detail).toBe(
      'the XML declaration names encoding "EBCDIC-US", which is not read here (UTF-8, ISO-8859-1, ISO-8859-15, windows-1252 or US-ASCII are)',
    );
  });
});

describe('XML safety', () => {
  it('refuses a billion-laughs DTD without expanding it', async () => {
    const lols = Array.from({ length: 9 }, (_, level) => `<!ENTITY lol${level + 1} "${`&lol${level};`.repeat(10)}">`).join('\n');
    const text = [
      '<?xml version="1.0"?>',
      `<!DOCTYPE Document [\n<!ENTITY lol0 "lol">\n${lols}\n]>`,
      '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt><Id>&lol9;</Id></Stmt></BkToCstmrStmt></Document>',
    ].join('\n');
    const error = await rejection(parseFile(text));
    expect(error.detail).toBe('a DOCTYPE declaration is refused: statements may not carry a DTD or entity declarations (line 13, column 2)');
    expect(error.position?.line).toBe(positionOf(text, ']>').line);
  });

  it('refuses an external entity without reading it', async () => {
    const text = [
      '<?xml version="1.0"?>',
      '<!DOCTYPE Document [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
      '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt><Id>&x;</Id></Stmt></BkToCstmrStmt></Document>',
    ].join('\n');
    const error = await rejection(parseFile(text));
    expect(error.detail).toBe('a DOCTYPE declaration is refused: statements may not carry a DTD or entity declarations (line 2, column 61)');
    expect(error.detail).not.toContain('root:');
  });

  it('refuses a DTD inside an envelope too', async () => {
    const text = '<?xml version="1.0"?>\n<!DOCTYPE BizMsgEnvlp [<!ENTITY x "y">]>\n<BizMsgEnvlp><AppHdr/></BizMsgEnvlp>';
    expect((await rejection(parseFile(text))).detail).toMatch(/^a DOCTYPE declaration is refused/);
  });

  it('refuses a reference to an undeclared entity, naming it, where it stands', async () => {
    const text = camt053(ntry({ details: '<NtryDtls><TxDtls><RmtInf><Ustrd>&x;</Ustrd></RmtInf></TxDtls></NtryDtls>' }));
    const error = await rejection(parseFile(text));
    const ampersand = positionOf(text, '&x;');
    expect(error.position).toEqual({ line: ampersand.line, column: (ampersand.column ?? 0) + 2 });
    expect(error.detail).toBe(
      `entity reference &x; is refused: only &amp; &lt; &gt; &quot; &apos; and character references are allowed (line ${ampersand.line}, column ${(ampersand.column ?? 0) + 2})`,
    );
  });

  it('refuses a DOCTYPE even without entities', async () => {
    const text = `<!DOCTYPE Document>\n${camt053('')}`;
    expect((await rejection(parseFile(text))).detail).toMatch(/^a DOCTYPE declaration is refused/);
  });

  it('refuses malformed XML with saxes line and column', async () => {
    const mismatched = camt053(ntry()).replace('</Ntry>', '</Entry>');
    expect((await rejection(parseFile(mismatched))).detail).toBe('malformed XML: unexpected close tag. (line 14, column 8)');
    const truncated = camt053(ntry()).slice(0, -20);
    expect((await rejection(parseFile(truncated))).detail).toBe('malformed XML: unclosed tag: BkToCstmrStmt (line 16, column 8)');
  });

  it('refuses an empty file', async () => {
    expect((await rejection(parseFile(' \n\t'))).detail).toBe('statement file is empty');
    expect((await rejection(parseFile(Buffer.from([0xef, 0xbb, 0xbf, 0x0a])))).detail).toBe('statement file is empty');
  });
});

describe('maxBytes', () => {
  it('refuses a file past maxBytes while streaming, without reading the rest', async () => {
    const text = camt053(Array.from({ length: 200 }, (_, index) => ntry({ reference: `<AcctSvcrRef>R${index}</AcctSvcrRef>` })).join('\n'));
    let chunksRead = 0;
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const chunk of chunked(text, 100)) {
        chunksRead += 1;
        yield chunk;
      }
    }
    const error = await rejection(parseStatement(counted(), { maxBytes: 1000 }));
    expect(error.detail).toBe('statement file larger than 1000 bytes');
    expect(chunksRead).toBe(11);
    expect(text.length).toBeGreaterThan(20_000);
  });

  it('accepts a file of exactly maxBytes', async () => {
    const text = camt053(ntry());
    expect((await parse(text, 10, Buffer.byteLength(text))).entries).toHaveLength(1);
    expect((await rejection(parseFile(text, 10, Buffer.byteLength(text) - 1))).detail).toBe(`statement file larger than ${Buffer.byteLength(text) - 1} bytes`);
  });

  it('names the file when given one', async () => {
    const error = await rejection(parseStatement(chunked(camt053(ntry(), { id: '<Id></Id>' }), 50), { maxBytes: MAX, fileName: 'nov27.xml' }));
    expect(error.detail).toBe('nov27.xml: Stmt is missing Id (line 5, column 1)');
    expect(error.position).toEqual({ line: 5, column: 1 });
  });
});

describe('readStatementAmount and statementAmountInMinorUnits', () => {
  const at = { line: 3 };
  const amount = (text: string, currency: string) => statementAmountInMinorUnits(text, currency, at);
  const refusal = (text: string, currency: string) => {
    try {
      amount(text, currency);
    } catch (error) {
      if (error instanceof StatementRejected) return error.detail;
      throw error;
    }
    throw new Error(`${text} ${currency} was accepted`);
  };

  it('moves the decimal point by the currency exponent', () => {
    expect(amount('1250', 'GBP')).toBe(125000);
    expect(amount('1250.5', 'GBP')).toBe(125050);
    expect(amount('1250.50', 'GBP')).toBe(125050);
    expect(amount('0.01', 'GBP')).toBe(1);
    expect(amount('007.10', 'GBP')).toBe(710);
    expect(amount('1250', 'JPY')).toBe(1250);
    expect(amount('1.234', 'BHD')).toBe(1234);
    expect(amount('1.2', 'BHD')).toBe(1200);
    expect(amount('0.0001', 'CLF')).toBe(1);
    expect(amount('9999999999999.99', 'GBP')).toBe(999_999_999_999_999);
  });

  it('accepts decimal places past the currency when they are zeros', () => {
    expect(amount('4106.910', 'GBP')).toBe(410691);
    expect(amount('200.0000', 'GBP')).toBe(20000);
    expect(amount('1250.0', 'JPY')).toBe(1250);
    expect(amount('9999999999999.990000', 'GBP')).toBe(999_999_999_999_999);
  });

  it('refuses what is not a positive plain decimal within the currency', () => {
    expect(refusal('0.00', 'GBP')).toBe('amount "0.00" is zero (line 3)');
    expect(refusal('0', 'JPY')).toBe('amount "0" is zero (line 3)');
    expect(refusal('-1', 'GBP')).toBe('amount "-1" is not a positive decimal number (line 3)');
    expect(refusal('1e3', 'GBP')).toBe('amount "1e3" is not a positive decimal number (line 3)');
    expect(refusal('1,250.00', 'GBP')).toBe('amount "1,250.00" is not a positive decimal number (line 3)');
    expect(refusal('+5', 'GBP')).toBe('amount "+5" is not a positive decimal number (line 3)');
    expect(refusal('1.', 'GBP')).toBe('amount "1." is not a positive decimal number (line 3)');
    expect(refusal('.5', 'GBP')).toBe('amount ".5" is not a positive decimal number (line 3)');
    expect(refusal(' 5', 'GBP')).toBe('amount " 5" is not a positive decimal number (line 3)');
    expect(refusal('', 'GBP')).toBe('amount "" is not a positive decimal number (line 3)');
    expect(refusal('NaN', 'GBP')).toBe('amount "NaN" is not a positive decimal number (line 3)');
    expect(refusal('1250.5', 'JPY')).toBe('amount "1250.5" has more decimal places than JPY allows (no decimal places) (line 3)');
    expect(refusal('10.005', 'GBP')).toBe('amount "10.005" has more decimal places than GBP allows (at most 2 decimal places) (line 3)');
    expect(refusal('1.2345', 'BHD')).toBe('amount "1.2345" has more decimal places than BHD allows (at most 3 decimal places) (line 3)');
    expect(refusal('10000000000000.00', 'GBP')).toBe('amount "10000000000000.00" GBP is too large (line 3)');
    expect(refusal('1', 'XYZ')).toBe('currency "XYZ" is not supported (line 3)');
  });

  it('reads zero only when asked to (a balance, a total)', () => {
    expect(readStatementAmount('0.000', 'GBP', { allowZero: true })).toEqual({ minor: 0 });
    expect(readStatementAmount('0.000', 'GBP')).toEqual({ problem: 'amount "0.000" is zero' });
    expect(statementAmountInMinorUnits('000', 'JPY', at, { allowZero: true })).toBe(0);
  });

  it('reads back every positive amount formatted in its currency, with or without trailing zeros', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SUPPORTED_CURRENCIES), fc.integer({ min: 1, max: 999_999_999_999_999 }), fc.nat(4), (currency, minor, padding) => {
        expect(amount(formatMinorUnits(minor, currency), currency)).toBe(minor);
        const padded = `${formatMinorUnits(minor, currency)}${currencyExponent(currency) === 0 && padding > 0 ? '.' : ''}${'0'.repeat(padding)}`;
        expect(amount(padded, currency)).toBe(minor);
        if (currencyExponent(currency) > 0) expect(amount(`${formatMinorUnits(minor, currency)}`.replace(/0+$/, '').replace(/\.$/, ''), currency)).toBe(minor);
      }),
    );
  });
});

describe('IBAN', () => {
  it('checks the mod-97 checksum', () => {
    for (const valid of ['GB29NWBK60161331926819', 'GB82WEST12345698765432', 'GB33BUKB20201555555555', 'DE89370400440532013000', 'NL91ABNA0417164300']) {
      expect(ibanChecksumIsValid(valid)).toBe(true);
    }
    for (const invalid of ['GB28NWBK60161331926819', 'GB29NWBK60161331926818', 'GB29NWBK6016133192681', 'GB29 NWBK 6016 1331 9268 19', 'gb29nwbk60161331926819', '']) {
      expect(ibanChecksumIsValid(invalid)).toBe(false);
    }
  });

  it('splits a GB IBAN into sort code and account number, printed form included', () => {
    expect(ukAccountFromIban('gb29 nwbk 6016 1331 9268 19', { line: 1 })).toEqual({ sortCode: '60-16-13', accountNumber: '31926819' });
  });

  it('catches every single-digit change and every swap of two adjacent different digits', () => {
    const iban = 'GB82WEST12345698765432';
    for (let index = 2; index < iban.length; index += 1) {
      const character = iban[index] ?? '';
      if (!/\d/.test(character)) continue;
      for (let digit = 0; digit <= 9; digit += 1) {
        if (String(digit) === character) continue;
        expect(ibanChecksumIsValid(`${iban.slice(0, index)}${digit}${iban.slice(index + 1)}`)).toBe(false);
      }
      const next = iban[index + 1] ?? '';
      if (/\d/.test(next) && next !== character) {
        expect(ibanChecksumIsValid(`${iban.slice(0, index)}${next}${character}${iban.slice(index + 2)}`)).toBe(false);
      }
    }
  });
});

describe('refusals of the account', () => {
  it('refuses an IBAN that fails its checksum, pointing at it', async () => {
    const text = camt053(ntry(), { account: '<Acct><Id><IBAN>GB28NWBK60161331926819</IBAN></Id><Ccy>GBP</Ccy></Acct>' });
    const error = await rejection(parseFile(text));
    expect(error.detail).toBe('account IBAN "GB28NWBK60161331926819" fails its checksum (line 7, column 11)');
    expect(error.position).toEqual(positionOf(text, '<IBAN>'));
  });

  it('refuses a non-GB IBAN and an Othr/Id that is not 14 digits', async () => {
    const german = camt053(ntry(), { account: '<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>GBP</Ccy></Acct>' });
    expect((await rejection(parseFile(german))).detail).toBe('account IBAN "DE89370400440532013000" is not a UK (GB) IBAN (line 7, column 11)');
    const short = camt053(ntry(), { account: '<Acct><Id><Othr><Id>6016133192681</Id></Othr></Id><Ccy>GBP</Ccy></Acct>' });
    expect((await rejection(parseFile(short))).detail).toBe('account id "6016133192681" is not a 6-digit sort code followed by an 8-digit account number (line 7, column 17)');
  });

  it('refuses an account without an id', async () => {
    const text = camt053(ntry(), { account: '<Acct><Ccy>GBP</Ccy></Acct>' });
    expect((await rejection(parseFile(text))).detail).toBe('Stmt/Acct is missing Id/IBAN or Id/Othr/Id (line 5, column 1)');
  });

  it('refuses an unsupported account currency', async () => {
    const text = camt053('', { account: '<Acct><Id><IBAN>GB29NWBK60161331926819</IBAN></Id><Ccy>XAU</Ccy></Acct>' });
    const error = await rejection(parseFile(text));
    expect(error.detail).toBe('currency "XAU" is not supported (line 7, column 51)');
    expect(error.position).toEqual(positionOf(text, '<Ccy>'));
  });
});

describe('public samples from banks and ISO 20022 (test/settlement/cash/fixtures/public, see its PROVENANCE.md)', () => {
  const samples: ReadonlyArray<[string, Iso20022Message]> = [
    ['iso20022-business-sample-camt053-v04.xml', 'camt.053.001.04'],
    ['postfinance-camt053-v04.xml', 'camt.053.001.04'],
    ['postfinance-camt054-v08.xml', 'camt.054.001.08'],
    ['goldman-sachs-uk-camt053-v02.xml', 'camt.053.001.02'],
  ];
  const read = (name: string) => parseStatement(createReadStream(fixture(`public/${name}`), { highWaterMark: 256 }), { maxBytes: MAX });

  it.each(samples)('%s still validates against the official %s schema after its adaptation', async (name, message) => {
    expect(await xsdErrors(readFileSync(fixture(`public/${name}`), 'utf8'), message)).toEqual([]);
  });

  it('ISO 20022 business example (v04): no Acct/Ccy, a batch given only as Btch, balances that add up', async () => {
    const file = await read('iso20022-business-sample-camt053-v04.xml');
    expect(file.statements).toHaveLength(1);
    const parsed = file.statements[0]!;
    expect({ ...parsed, entries: [], balances: [] }).toEqual(statement({ statementId: 'AAAASESS-FP-STAT001', currency: null }));
    expect(parsed.balances.map(({ type, amount, currency, date }) => [type, amount, currency, date])).toEqual([
      ['OPBD', 50_000_000, 'GBP', '2010-10-15'],
      ['CLBD', 43_567_850, 'GBP', '2010-10-18'],
    ]);
    const text = readFileSync(fixture('public/iso20022-business-sample-camt053-v04.xml'), 'utf8');
    const common = { bookingDate: '2010-10-18', valueDate: '2010-10-18' };
    expect(parsed.entries).toEqual([
      entry({
        ...common,
        position: positionOf(text, '<Ntry>', 1),
        bankReference: 'AAAASESS-FP-CN_98765/01',
        accountServicerReference: 'AAAASESS-FP-CN_98765/01',
        transactionReferences: ['MUELL/FINP/RA12345'],
        bankTransactionCode: { domain: 'PAYM', family: '0001', subFamily: '0005', proprietary: null },
        amount: 10_567_850,
        debtorName: 'MUELLER',
      }),
      // A batch of 20 payments given only as Btch: one entry, the lump.
      entry({
        ...common,
        position: positionOf(text, '<Ntry>', 2),
        index: 1,
        bankReference: 'AAAASESS-FP-ACCR-01',
        accountServicerReference: 'AAAASESS-FP-ACCR-01',
        bankTransactionCode: { domain: 'PAYM', family: '0001', subFamily: '0003', proprietary: null },
        direction: 'debit',
        amount: 20_000_000,
      }),
      entry({
        ...common,
        position: positionOf(text, '<Ntry>', 3),
        index: 2,
        bankReference: 'AAAASESS-FP-CONF-FX',
        accountServicerReference: 'AAAASESS-FP-CONF-FX',
        transactionReferences: ['FP-004567-FX', 'AAAASS1085FINPSS'],
        bankTransactionCode: { domain: 'TREA', family: '0002', subFamily: '0000', proprietary: null },
        amount: 3_000_000,
      }),
    ]);
    expect(statementIntegrityFindings(parsed)).toEqual([]);
  });

  it('PostFinance camt.053 (v04): batches split into their parts, reversals and returns, texts, balances that add up', async () => {
    const parsed = (await read('postfinance-camt053-v04.xml')).statements[0]!;
    expect(parsed).toMatchObject({ statementId: '20160430375204000008574', electronicSequenceNumber: '85', currency: null, page: { number: 1, last: true } });
    expect(parsed.entries).toHaveLength(32);
    expect(parsed.entries.filter((booked) => booked.batch !== null).map((booked) => booked.batch?.parts)).toEqual([
      ...Array(10).fill(10),
      ...Array(8).fill(8),
      ...Array(3).fill(3),
      2,
      2,
    ]);
    expect(parsed.entries.every((booked) => booked.problem === null && booked.currency === 'GBP')).toBe(true);
    // The first debit: the bank's charge, its text in AddtlNtryInf.
    expect(parsed.entries[0]).toMatchObject({
      bankReference: '20160401001027080060699001000107',
      direction: 'debit',
      amount: 2400,
      bookingDate: '2016-04-30',
      reversal: false,
      bankTransactionCode: { domain: 'ACMT', family: 'ADOP', subFamily: 'CHRG', proprietary: null },
      remittanceInformation: 'UEBRIGE: 25-9034-2 FÜR KONTOAUSZUG PAPIER TÄGLICH',
    });
    // Part 6 of 10 of the ISR batch: its own reference, QR/ISR reference first, the batch's text after.
    expect(parsed.entries[11]).toMatchObject({
      index: 11,
      bankReference: '20160530007602769939022000000012/6',
      accountServicerReference: '160527CH00T3KXDV',
      entryReference: '010000004',
      batch: { amount: 100000, part: 6, parts: 10 },
      amount: 20000,
      transactionReferences: ['160527CH00T3KXDV'],
      remittanceInformation: '000000000002016030002463591 | SAMMELGUTSCHRIFT ESR VERARBEITUNG VOM 27.05.2016 KUNDENNUMMER 01-000000-4 PAKET ID: 160527CH000000RU',
      debtorName: 'Bernasconi Maria',
      debtorAccount: 'CH4444444444444444444',
    });
    // The returns batch: each part a returned payment with its proprietary reason.
    expect(parsed.entries.slice(24, 27).map(({ returnReason, amount, transactionReferences }) => [returnReason, amount, transactionReferences[0]])).toEqual([
      ['NARR', 2000, 'MSG-RETURN-Test'],
      ['NARR', 4000, 'MSG-Return-Muster'],
      ['NARR', 5000, 'MSG-Return-Muster'],
    ]);
    // The two direct-debit refunds: reversals (RvslInd true) with their MD06 reason.
    expect(
      parsed.entries
        .slice(30)
        .map(({ direction, reversal, returnReason, amount, bankTransactionCode }) => [direction, reversal, returnReason, amount, bankTransactionCode?.family]),
    ).toEqual([
      ['debit', true, 'MD06', 600, 'IDDT'],
      ['debit', true, 'MD06', 1553, 'RDDT'],
    ]);
    expect(parsed.entries[30]?.remittanceInformation).toMatch(/^Mitteilung 128 \| RÜCKBELASTUNG \(REFUND\) CHDD-BASISLASTSCHRIFT/);
    expect(statementIntegrityFindings(parsed)).toEqual([]);
  });

  it('PostFinance camt.054 (v08): a batch credit of two QR payments, Dbtr/Pty/Nm, UETR', async () => {
    const file = await read('postfinance-camt054-v08.xml');
    expect(file.format).toBe('camt.054');
    const parsed = file.statements[0]!;
    expect(parsed).toMatchObject({ format: 'camt.054', statementId: '20200618375204295372465', currency: 'GBP', account: UK_ACCOUNT, balances: [] });
    const batchText = 'SAMMELGUTSCHRIFT FÜR KONTO: CH7730000001250094239 VERARBEITUNG VOM 18.06.2020 PAKET ID: 200618CH000009TB';
    const common = {
      entryReference: 'CH7730000001250094239',
      bookingDate: '2020-06-18',
      valueDate: '2020-06-18',
      debtorName: 'Bernasconi Maria',
      debtorAccount: 'CH5109000000250092291',
    };
    const code = { domain: 'PMNT', family: 'RCDT', subFamily: 'VCOM', proprietary: null };
    const text = readFileSync(fixture('public/postfinance-camt054-v08.xml'), 'utf8');
    expect(parsed.entries).toEqual([
      entry({
        ...common,
        position: positionOf(text, '<TxDtls>', 1),
        bankReference: '1000000000000000/1',
        accountServicerReference: '2000000000000000',
        transactionReferences: ['1006265-25bbb3b1a', '1006265-aic5dL-75dzf3jk9-cf2d5e9', 'b009c997-97b3-4a9c-803c-d645a7276bf0', '00000000000000000000020'],
        batch: { amount: 169222, part: 1, parts: 2 },
        bankTransactionCode: code,
        amount: 77829,
        remittanceInformation: `539115429773825311971477453 | ${batchText}`,
      }),
      entry({
        ...common,
        position: positionOf(text, '<TxDtls>', 2),
        index: 1,
        bankReference: '1000000000000000/2',
        accountServicerReference: '3000000000000000',
        transactionReferences: ['1005970-70a75515', '00000000000000000000030'],
        batch: { amount: 169222, part: 2, parts: 2 },
        bankTransactionCode: code,
        amount: 91393,
        remittanceInformation: `662437765447746478179744715 | ${batchText}`,
      }),
    ]);
    expect(statementIntegrityFindings(parsed)).toEqual([]);
  });

  it('Goldman Sachs UK camt.053 (v02): two statements, a BACS return reversed, v02 totals, a closing balance that does not add up', async () => {
    const file = await read('goldman-sachs-uk-camt053-v02.xml');
    expect(
      file.statements.map(({ statementId, account, electronicSequenceNumber, legalSequenceNumber, entries }) => [
        statementId,
        account,
        electronicSequenceNumber,
        legalSequenceNumber,
        entries.length,
      ]),
    ).toEqual([
      ['9740092600', { sortCode: '04-29-62', accountNumber: '60000635' }, '496373', '496373', 0],
      ['9740092650', { sortCode: '04-29-62', accountNumber: '50000970' }, '496374', '496374', 6],
    ]);
    const [empty, busy] = file.statements as [ParsedStatement, ParsedStatement];
    expect(statementIntegrityFindings(empty)).toEqual([]);
    expect(busy.summary).toEqual({ entries: { count: 6, sum: 60000, net: -20000 }, credits: { count: 2, sum: 20000 }, debits: { count: 4, sum: 40000 } });
    expect(busy.entries[2]).toMatchObject({
      bankReference: '181694550',
      accountServicerReference: null,
      entryReference: '181694550',
      direction: 'credit',
      reversal: true,
      amount: 10000,
      bookingDate: '2023-10-09',
      valueDate: '2022-10-12',
      bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ARET', proprietary: 'BACS Credit Payment Return' },
      transactionReferences: ['BACSIN2023100614330204P', '00384068', 'SB2327900001420'],
      debtorName: 'TEST NAME',
      debtorAccount: '12345678',
      returnReason: null,
    });
    expect(busy.entries[2]?.remittanceInformation).toBe(
      'GSGA8BGHVA | Desc: Return From: FILES UAT SI, Remittance Info: "GSGA8BGHVA", Reason: "0", Client Ref ID: 00384068, GS ID: SB2327900001420, Value Date: Oct 12, 2022',
    );
    expect(busy.entries[4]?.remittanceInformation).toMatch(/^Test Remit Info \| Test Remit Info \| Desc: From: Test Investments/);
    // As published, its totals agree with its entries but its closing balance does not.
    expect(statementIntegrityFindings(busy)).toEqual([
      {
        code: 'balance_mismatch',
        detail:
          "the opening balance (OPBD) £334,425,218.07 and the booked entries' net -£200.00 make £334,425,018.07, but the closing balance (CLBD) is £334,425,126.42: £108.35 unaccounted for",
      },
    ]);
  });
});

describe('a large statement', () => {
  it('parses 10,000 entries with their count and total', async () => {
    const count = 10_000;
    let expectedTotal = 0;
    const entries: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const minor = 1 + ((index * 7919) % 250_000);
      expectedTotal += minor;
      entries.push(
        ntry({
          amount: formatMinorUnits(minor, 'GBP'),
          reference: `<AcctSvcrRef>NWB${String(index).padStart(8, '0')}</AcctSvcrRef>`,
          details: `<NtryDtls><TxDtls><RltdPties><Dbtr><Nm>Employer ${index}</Nm></Dbtr></RltdPties><RmtInf><Ustrd>SDR261030P${index}</Ustrd></RmtInf></TxDtls></NtryDtls>`,
        }),
      );
    }
    const text = camt053(entries.join('\n'));
    const started = performance.now();
    const parsed = await parse(text, 64 * 1024, 50_000_000);
    const elapsed = performance.now() - started;
    console.log(`camt.053 of ${count} entries (${(text.length / 1e6).toFixed(1)} MB) parsed in ${elapsed.toFixed(0)} ms`);
    expect(parsed.entries).toHaveLength(count);
    expect(parsed.entries.reduce((total, booked) => total + booked.amount, 0)).toBe(expectedTotal);
    expect(parsed.entries[9_999]).toMatchObject({ index: 9_999, bankReference: 'NWB00009999', remittanceInformation: 'SDR261030P9999', debtorName: 'Employer 9999' });
  });
});
