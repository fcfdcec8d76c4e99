import { createReadStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../support/property-seed.ts';
import { SUPPORTED_CURRENCIES, currencyExponent } from '../../src/money/currency.ts';
import { formatMinorUnits } from '../../src/money/major-units.ts';
import {
  type FilePosition,
  type ParsedStatement,
  StatementRejected,
  ibanChecksumIsValid,
  statementAmountInMinorUnits,
  ukAccountFromIban,
} from '../../src/cash/bank-statement.ts';
import { parseStatement } from '../../src/cash/statement-parser.ts';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const MAX = 1_000_000;

async function* chunked(text: string | Buffer, size: number): AsyncGenerator<Buffer> {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

function parse(text: string, chunkSize = 97, maxBytes = MAX): Promise<ParsedStatement> {
  return parseStatement(chunked(text, chunkSize), { maxBytes });
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

function camt053(body: string, { version = '02', account = ACCOUNT, id = '<Id>S1</Id>' } = {}): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.${version}">`,
    '<BkToCstmrStmt>',
    '<GrpHdr><MsgId>M1</MsgId></GrpHdr>',
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
  } = parts;
  const amountElement = amount === '' ? '' : `<Amt Ccy="${currency}">${amount}</Amt>`;
  const indicatorElement = indicator === '' ? '' : `<CdtDbtInd>${indicator}</CdtDbtInd>`;
  return ['<Ntry>', amountElement, indicatorElement, status, booking, reference, details, '</Ntry>'].filter((line) => line !== '').join('\n');
}

describe('camt.053.001.02', () => {
  it('reads the booked entries: Strd reference before Ustrd, Ustrd joined, NtryRef when no AcctSvcrRef, a debit, a pending entry skipped, a batch split', async () => {
    const statement = await parseStatement(createReadStream(fixture('camt053-v02.xml'), { highWaterMark: 64 }), { maxBytes: MAX });
    const common = { currency: 'GBP', bookingDate: '2026-11-27' };
    expect(statement).toEqual({
      format: 'camt.053',
      statementId: 'STMT-20261127-001',
      account: { sortCode: '60-16-13', accountNumber: '31926819' },
      currency: 'GBP',
      entries: [
        {
          ...common,
          position: { line: 25, column: 7 },
          bankReference: 'NWB20261127000001',
          direction: 'credit',
          amount: 125000,
          valueDate: '2026-11-27',
          remittanceInformation: 'SDR261030P12',
          debtorName: 'Acme Payroll Ltd',
          debtorAccount: 'GB82WEST12345698765432',
        },
        {
          ...common,
          position: { line: 53, column: 7 },
          bankReference: 'NTRY-0002',
          direction: 'credit',
          amount: 31045,
          valueDate: '2026-11-28',
          remittanceInformation: 'SDR261030P13 BROWN NOV',
          debtorName: 'Brown & Sons',
          debtorAccount: '20000055555555',
        },
        {
          ...common,
          position: { line: 80, column: 7 },
          bankReference: 'NWB20261127000004',
          direction: 'debit',
          amount: 50000,
          valueDate: '2026-11-27',
          remittanceInformation: 'PAYOUT PO-2611-7',
          debtorName: null,
          debtorAccount: null,
        },
        {
          ...common,
          position: { line: 105, column: 11 },
          bankReference: 'NWB20261127000005/1',
          direction: 'credit',
          amount: 10000,
          valueDate: '2026-11-27',
          remittanceInformation: 'SDR261030P14',
          debtorName: 'Carter Ltd',
          debtorAccount: null,
        },
        {
          ...common,
          position: { line: 110, column: 11 },
          bankReference: 'NWB20261127000005/2',
          direction: 'credit',
          amount: 20000,
          valueDate: '2026-11-27',
          remittanceInformation: 'SDR261030P15',
          debtorName: 'Dunn Ltd',
          debtorAccount: null,
        },
      ],
    });
    // The positions above are those of the start tags, counted here independently of the parser.
    const text = readFileSync(fixture('camt053-v02.xml'), 'utf8');
    expect(statement.entries.slice(0, 3).map((entry) => entry.position)).toEqual([
      positionOf(text, '<Ntry>', 1),
      positionOf(text, '<Ntry>', 2),
      positionOf(text, '<Ntry>', 4),
    ]);
    // The split batch points at each TxDtls: the 4th and 5th of the file.
    expect(statement.entries.slice(3).map((entry) => entry.position)).toEqual([positionOf(text, '<TxDtls>', 4), positionOf(text, '<TxDtls>', 5)]);
  });

  it('gives the same result whatever the chunk size, down to one byte', async () => {
    const text = readFileSync(fixture('camt053-v02.xml'), 'utf8');
    const whole = await parse(text, text.length);
    expect(await parse(text, 1)).toEqual(whole);
    expect(await parse(text, 7)).toEqual(whole);
  });
});

describe('camt.053.001.08', () => {
  it('reads Sts/Cd, BookgDt/DtTm, Othr/Id account, Dbtr/Pty/Nm, TxDtls/Amt, character references; skips an INFO entry', async () => {
    // One-byte chunks split the two-byte é of "Café" across chunks.
    const statement = await parseStatement(chunked(readFileSync(fixture('camt053-v08.xml')), 1), { maxBytes: MAX });
    expect(statement).toEqual({
      format: 'camt.053',
      statementId: 'BARC/2026/11/30',
      account: { sortCode: '60-16-13', accountNumber: '31926819' },
      currency: 'GBP',
      entries: [
        {
          position: { line: 19, column: 7 },
          bankReference: 'BARC301100001',
          direction: 'credit',
          amount: 4210,
          currency: 'GBP',
          bookingDate: '2026-11-30',
          valueDate: '2026-11-30',
          remittanceInformation: 'SDR261130P07',
          debtorName: 'Café René Ltd',
          debtorAccount: 'GB33BUKB20201555555555',
        },
        {
          position: { line: 47, column: 7 },
          bankReference: 'BARC301100003',
          direction: 'debit',
          amount: 750,
          currency: 'GBP',
          bookingDate: '2026-11-30',
          valueDate: null,
          remittanceInformation: 'BANK CHARGES NOV',
          debtorName: null,
          debtorAccount: null,
        },
      ],
    });
  });
});

describe('camt.054.001.02', () => {
  it('reads a notification (Ntfctn) and skips its pending entry', async () => {
    const statement = await parseStatement(createReadStream(fixture('camt054-v02.xml')), { maxBytes: MAX });
    expect(statement).toEqual({
      format: 'camt.054',
      statementId: 'NTF-88213',
      account: { sortCode: '60-16-13', accountNumber: '31926819' },
      currency: 'GBP',
      entries: [
        {
          position: { line: 15, column: 7 },
          bankReference: 'NWB20261127110213',
          direction: 'credit',
          amount: 125000,
          currency: 'GBP',
          bookingDate: '2026-11-27',
          valueDate: '2026-11-27',
          remittanceInformation: 'SDR261030P12',
          debtorName: 'Acme Payroll Ltd',
          debtorAccount: 'GB82WEST12345698765432',
        },
      ],
    });
  });
});

describe('versions and layout', () => {
  it.each(['02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12', '13'])('accepts camt.053.001.%s and camt.054.001.%s', async (version) => {
    const entry = ntry({ status: Number(version) >= 4 ? '<Sts><Cd>BOOK</Cd></Sts>' : '<Sts>BOOK</Sts>' });
    expect((await parse(camt053(entry, { version }))).entries).toHaveLength(1);
    const notification = [
      `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.${version}">`,
      '<BkToCstmrDbtCdtNtfctn><Ntfctn><Id>N1</Id>',
      ACCOUNT,
      entry,
      '</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>',
    ].join('\n');
    const parsed = await parse(notification);
    expect(parsed.format).toBe('camt.054');
    expect(parsed.statementId).toBe('N1');
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

  it('stops reading the source when it refuses the file', async () => {
    let closed = false;
    async function* source(): AsyncGenerator<string> {
      try {
        yield camt053(ntry({ amount: '-5' }));
        yield* Array.from({ length: 1000 }, () => '<!-- more -->');
      } finally {
        closed = true;
      }
    }
    expect((await rejection(parseStatement(Readable.from(source()), { maxBytes: MAX }))).detail).toBe('amount "-5" is not a positive decimal number (line 8, column 1)');
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(true);
  });

  it('refuses camt versions outside 02 to 13, and other messages', async () => {
    const v01 = camt053(ntry(), { version: '01' });
    expect((await rejection(parse(v01))).detail).toBe('camt.053.001.01 is not a supported version (02 to 13) (line 2, column 1)');
    const camt052 = v01.replace('camt.053.001.01', 'camt.052.001.02');
    expect((await rejection(parse(camt052))).detail).toBe(
      'not a camt.053 or camt.054 document: the root element is Document in namespace urn:iso:std:iso:20022:tech:xsd:camt.052.001.02 (line 2, column 1)',
    );
    expect((await rejection(parse('<Document><Stmt/></Document>'))).detail).toBe(
      'not a camt.053 or camt.054 document: the root element is Document without a namespace (line 1, column 1)',
    );
  });

  it('refuses a camt.053 namespace around a notification group', async () => {
    const text = camt053(ntry()).replace(/BkToCstmrStmt/g, 'BkToCstmrDbtCdtNtfctn');
    const error = await rejection(parse(text));
    expect(error.detail).toBe('expected BkToCstmrStmt under Document, found BkToCstmrDbtCdtNtfctn (line 3, column 1)');
    expect(error.position).toEqual(positionOf(text, '<BkToCstmrDbtCdtNtfctn>'));
  });

  it('refuses a document without a statement', async () => {
    const text = camt053('').replace(/<Stmt>[\s\S]*<\/Stmt>/, '');
    expect((await rejection(parse(text))).detail).toBe('no Stmt element in the document');
  });

  it('refuses a second Stmt, pointing at it', async () => {
    const text = camt053(`${ntry()}\n</Stmt>\n<Stmt>\n<Id>S2</Id>\n${ACCOUNT}`);
    const error = await rejection(parse(text));
    expect(error.position).toEqual(positionOf(text, '<Stmt>', 2));
    expect(error.detail).toBe(`a second Stmt in the file (the first is at line 5): one statement per file is accepted (line ${error.position?.line}, column 1)`);
  });

  it('refuses a second Ntfctn', async () => {
    const text = [
      '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn>',
      `<Ntfctn><Id>N1</Id>${ACCOUNT}</Ntfctn>`,
      `<Ntfctn><Id>N2</Id>${ACCOUNT}</Ntfctn>`,
      '</BkToCstmrDbtCdtNtfctn></Document>',
    ].join('\n');
    const error = await rejection(parse(text));
    expect(error.detail).toBe('a second Ntfctn in the file (the first is at line 2): one statement per file is accepted (line 3, column 1)');
  });
});

describe('refusals of the account', () => {
  it('refuses a statement without Id', async () => {
    const text = camt053('', { id: '' });
    expect((await rejection(parse(text))).detail).toBe('Stmt is missing Id (line 5, column 1)');
  });

  it('refuses an account without currency or without identification', async () => {
    const noCurrency = camt053(ntry(), { account: '<Acct><Id><IBAN>GB29NWBK60161331926819</IBAN></Id></Acct>' });
    expect((await rejection(parse(noCurrency))).detail).toBe('Stmt/Acct is missing Ccy (line 5, column 1)');
    const noId = camt053(ntry(), { account: '<Acct><Ccy>GBP</Ccy></Acct>' });
    expect((await rejection(parse(noId))).detail).toBe('Stmt/Acct is missing Id/IBAN or Id/Othr/Id (line 5, column 1)');
    const noAccount = camt053(ntry(), { account: '' });
    expect((await rejection(parse(noAccount))).detail).toBe('Ntry before the Stmt/Acct it belongs to (line 8, column 1)');
    const noAccountNoEntry = camt053('', { account: '' });
    expect((await rejection(parse(noAccountNoEntry))).detail).toBe('Stmt is missing Acct (line 5, column 1)');
  });

  it('refuses an IBAN that fails its checksum, pointing at the IBAN', async () => {
    const text = camt053(ntry(), { account: '<Acct><Id><IBAN>GB28NWBK60161331926819</IBAN></Id><Ccy>GBP</Ccy></Acct>' });
    const error = await rejection(parse(text));
    expect(error.detail).toBe('account IBAN "GB28NWBK60161331926819" fails its checksum (line 7, column 11)');
    expect(error.position).toEqual(positionOf(text, '<IBAN>'));
  });

  it('refuses a non-GB IBAN and an Othr/Id that is not 14 digits', async () => {
    const german = camt053(ntry(), { account: '<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>GBP</Ccy></Acct>' });
    expect((await rejection(parse(german))).detail).toBe('account IBAN "DE89370400440532013000" is not a UK (GB) IBAN (line 7, column 11)');
    const short = camt053(ntry(), { account: '<Acct><Id><Othr><Id>6016133192681</Id></Othr></Id><Ccy>GBP</Ccy></Acct>' });
    expect((await rejection(parse(short))).detail).toBe(
      'account id "6016133192681" is not a 6-digit sort code followed by an 8-digit account number (line 7, column 17)',
    );
  });

  it('refuses an unsupported account currency', async () => {
    const text = camt053('', { account: '<Acct><Id><IBAN>GB29NWBK60161331926819</IBAN></Id><Ccy>XAU</Ccy></Acct>' });
    const error = await rejection(parse(text));
    expect(error.detail).toBe('currency "XAU" is not supported (line 7, column 51)');
    expect(error.position).toEqual(positionOf(text, '<Ccy>'));
  });
});

describe('refusals of an entry, at its start tag', () => {
  async function entryRefusal(body: string, occurrence = 1): Promise<{ detail: string; atEntry: boolean }> {
    const text = camt053(body);
    const error = await rejection(parse(text));
    return { detail: error.detail, atEntry: JSON.stringify(error.position) === JSON.stringify(positionOf(text, '<Ntry>', occurrence)) };
  }

  it.each([
    ['Sts', { status: '' }],
    ['Amt', { amount: '' }],
    ['CdtDbtInd', { indicator: '' }],
    ['BookgDt/Dt or BookgDt/DtTm', { booking: '' }],
    ['AcctSvcrRef or NtryRef', { reference: '' }],
  ] as const)('refuses an entry missing %s', async (element, parts) => {
    expect(await entryRefusal(ntry(parts))).toEqual({ detail: `Ntry is missing ${element} (line 8, column 1)`, atEntry: true });
  });

  it('refuses an amount without currency attribute, in another currency, or not a positive decimal', async () => {
    const noCcy = ntry().replace(' Ccy="GBP"', '');
    expect(await entryRefusal(noCcy)).toEqual({ detail: 'Ntry/Amt has no Ccy attribute (line 8, column 1)', atEntry: true });
    expect(await entryRefusal(ntry({ currency: 'EUR' }))).toEqual({
      detail: 'entry currency EUR differs from the account currency GBP (line 8, column 1)',
      atEntry: true,
    });
    for (const [amount, why] of [
      ['0.00', 'is zero'],
      ['-1', 'is not a positive decimal number'],
      ['1e3', 'is not a positive decimal number'],
      ['10.005', 'has more decimal places than GBP allows (at most 2 decimal places)'],
    ]) {
      expect(await entryRefusal(ntry({ amount }))).toEqual({ detail: `amount "${amount}" ${why} (line 8, column 1)`, atEntry: true });
    }
  });

  it('refuses a direction that is neither CRDT nor DBIT, and an impossible date', async () => {
    expect(await entryRefusal(ntry({ indicator: 'CR' }))).toEqual({ detail: 'CdtDbtInd "CR" is neither CRDT nor DBIT (line 8, column 1)', atEntry: true });
    expect(await entryRefusal(ntry({ booking: '<BookgDt><Dt>2026-02-30</Dt></BookgDt>' }))).toEqual({
      detail: 'BookgDt "2026-02-30" is not a valid date (YYYY-MM-DD) (line 8, column 1)',
      atEntry: true,
    });
  });

  it('refuses a duplicate bank reference at the second entry, naming the first', async () => {
    const first = ntry();
    const second = ntry({ amount: '20.00' });
    expect(await entryRefusal(`${first}\n${second}`, 2)).toEqual({
      detail: 'duplicate bank reference "R1" (first at line 8, column 1) (line 15, column 1)',
      atEntry: true,
    });
    // NtryRef counts as the bank reference when AcctSvcrRef is absent, so it is checked too.
    const byEntryRef = ntry({ reference: '<NtryRef>E1</NtryRef>' });
    expect((await entryRefusal(`${byEntryRef}\n${byEntryRef}`, 2)).detail).toBe('duplicate bank reference "E1" (first at line 8, column 1) (line 15, column 1)');
  });

  it('does not check a pending entry, which is not imported', async () => {
    const pending = ntry({ status: '<Sts>PDNG</Sts>', amount: '0.00', currency: 'EUR' });
    expect((await parse(camt053(`${pending}\n${ntry()}`))).entries.map((entry) => entry.bankReference)).toEqual(['R1']);
  });

  it('refuses a batch whose TxDtls lack an amount or do not add up to the entry', async () => {
    const tx = (amount: string) => `<TxDtls>${amount === '' ? '' : `<Amt Ccy="GBP">${amount}</Amt>`}</TxDtls>`;
    const batch = (...amounts: string[]) => ntry({ amount: '30.00', details: `<NtryDtls>\n${amounts.map(tx).join('\n')}\n</NtryDtls>` });
    const missing = camt053(batch('10.00', ''));
    const missingError = await rejection(parse(missing));
    expect(missingError.detail).toBe('TxDtls 2 of a batch-booked Ntry has no Amt (line 16, column 1)');
    expect(missingError.position).toEqual(positionOf(missing, '<TxDtls>', 2));
    expect((await rejection(parse(camt053(batch('10.00', '10.00'))))).detail).toBe(
      'the TxDtls amounts of a batch-booked Ntry do not add up to its Amt 30.00 (line 8, column 1)',
    );
    const parsed = await parse(camt053(batch('10.00', '20.00')));
    expect(parsed.entries.map(({ bankReference, amount }) => [bankReference, amount])).toEqual([
      ['R1/1', 1000],
      ['R1/2', 2000],
    ]);
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
    const error = await rejection(parse(text));
    expect(error.detail).toBe('a DOCTYPE declaration is refused: statements may not carry a DTD or entity declarations (line 13, column 2)');
    expect(error.position?.line).toBe(positionOf(text, ']>').line);
  });

  it('refuses an external entity without reading it', async () => {
    const text = [
      '<?xml version="1.0"?>',
      '<!DOCTYPE Document [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
      '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt><Id>&x;</Id></Stmt></BkToCstmrStmt></Document>',
    ].join('\n');
    const error = await rejection(parse(text));
    expect(error.detail).toBe('a DOCTYPE declaration is refused: statements may not carry a DTD or entity declarations (line 2, column 61)');
    expect(error.detail).not.toContain('root:');
  });

  it('refuses a reference to an undeclared entity, naming it, where it stands', async () => {
    const text = camt053(ntry({ details: '<NtryDtls><TxDtls><RmtInf><Ustrd>&x;</Ustrd></RmtInf></TxDtls></NtryDtls>' }));
    const error = await rejection(parse(text));
    const ampersand = positionOf(text, '&x;');
    expect(error.position).toEqual({ line: ampersand.line, column: (ampersand.column ?? 0) + 2 });
    expect(error.detail).toBe(
      `entity reference &x; is refused: only &amp; &lt; &gt; &quot; &apos; and character references are allowed (line ${ampersand.line}, column ${(ampersand.column ?? 0) + 2})`,
    );
  });

  it('refuses a DOCTYPE even without entities', async () => {
    const text = `<!DOCTYPE Document>\n${camt053('')}`;
    expect((await rejection(parse(text))).detail).toMatch(/^a DOCTYPE declaration is refused/);
  });

  it('refuses malformed XML with saxes line and column', async () => {
    const mismatched = camt053(ntry()).replace('</Ntry>', '</Entry>');
    expect((await rejection(parse(mismatched))).detail).toBe('malformed XML: unexpected close tag. (line 14, column 8)');
    const truncated = camt053(ntry()).slice(0, -20);
    expect((await rejection(parse(truncated))).detail).toBe('malformed XML: unclosed tag: BkToCstmrStmt (line 16, column 8)');
  });

  it('refuses bytes that are not UTF-8, and an empty file', async () => {
    const latin1 = Buffer.from(camt053(ntry({ details: '<NtryDtls><TxDtls><RmtInf><Ustrd>Café</Ustrd></RmtInf></TxDtls></NtryDtls>' })), 'latin1');
    expect((await rejection(parseStatement(chunked(latin1, 50), { maxBytes: MAX }))).detail).toBe('statement file is not valid UTF-8 text');
    expect((await rejection(parse(' \n\t'))).detail).toBe('statement file is empty');
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
    expect((await rejection(parse(text, 10, Buffer.byteLength(text) - 1))).detail).toBe(`statement file larger than ${Buffer.byteLength(text) - 1} bytes`);
  });

  it('names the file when given one', async () => {
    const error = await rejection(parseStatement(chunked(camt053(ntry({ amount: '0' })), 50), { maxBytes: MAX, fileName: 'nov27.xml' }));
    expect(error.detail).toBe('nov27.xml: amount "0" is zero (line 8, column 1)');
    expect(error.position).toEqual({ line: 8, column: 1 });
  });
});

describe('statementAmountInMinorUnits', () => {
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
    expect(refusal('1250.0', 'JPY')).toBe('amount "1250.0" has more decimal places than JPY allows (no decimal places) (line 3)');
    expect(refusal('1.2345', 'BHD')).toBe('amount "1.2345" has more decimal places than BHD allows (at most 3 decimal places) (line 3)');
    expect(refusal('10000000000000.00', 'GBP')).toBe('amount "10000000000000.00" GBP is too large (line 3)');
    expect(refusal('1', 'XYZ')).toBe('currency "XYZ" is not supported (line 3)');
  });

  it('reads back every positive amount formatted in its currency', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SUPPORTED_CURRENCIES), fc.integer({ min: 1, max: 999_999_999_999_999 }), (currency, minor) => {
        expect(amount(formatMinorUnits(minor, currency), currency)).toBe(minor);
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
    const statement = await parse(text, 64 * 1024, 50_000_000);
    const elapsed = performance.now() - started;
    console.log(`camt.053 of ${count} entries (${(text.length / 1e6).toFixed(1)} MB) parsed in ${elapsed.toFixed(0)} ms`);
    expect(statement.entries).toHaveLength(count);
    expect(statement.entries.reduce((total, entry) => total + entry.amount, 0)).toBe(expectedTotal);
    expect(statement.entries[9_999]).toMatchObject({ bankReference: 'NWB00009999', remittanceInformation: 'SDR261030P9999', debtorName: 'Employer 9999' });
  });
});
