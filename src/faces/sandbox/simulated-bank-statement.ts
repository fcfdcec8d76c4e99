import { create } from 'xmlbuilder2';
import { formatMinorUnits } from '../../platform/money/major-units.ts';

export interface SimulatedEntry {
  /** The bank's unique reference of the entry (AcctSvcrRef). */
  bankReference: string;
  direction: 'credit' | 'debit';
  amount: number;
  bookingDate: string;
  /** What the payer wrote: the remittance information (Ustrd). */
  reference: string | null;
  debtorName: string | null;
}

export interface SimulatedStatement {
  statementId: string;
  /** UK sort code (NN-NN-NN) and account number of the collection account. */
  account: { sortCode: string; accountNumber: string };
  currency: string;
  createdAt: Date;
  /** The account's balance before these entries, in signed minor units (0 when not given): OPBD; CLBD is it plus the entries. */
  openingBalance?: number;
  entries: readonly SimulatedEntry[];
}

/**
 * An end-of-day statement as a bank would send it: ISO 20022 camt.053.001.02, one Stmt, the account
 * named by its sort code and number (Othr/Id, scheme BBAN), its opening and closing booked balances
 * (OPBD, CLBD: the opening plus the entries) and its totals (TxsSummry), one booked entry per credit or
 * debit with its bank transaction code and the payer's reference as unstructured remittance
 * information. Valid against the official schema (test/settlement/cash/written-xml-xsd.test.ts), elements in
 * the schema's order. The demo's bank and the benchmarks write their statements with it; the service
 * reads them like any bank's.
 */
export function simulatedCamt053(statement: SimulatedStatement): string {
  const { currency } = statement;
  const money = (minor: number | bigint) => formatMinorUnits(minor, currency);
  const indicator = (signed: bigint) => (signed < 0n ? 'DBIT' : 'CRDT');
  const absolute = (signed: bigint) => (signed < 0n ? -signed : signed);
  let credits = 0n;
  let debits = 0n;
  let creditCount = 0;
  for (const entry of statement.entries) {
    if (entry.direction === 'credit') {
      credits += BigInt(entry.amount);
      creditCount += 1;
    } else debits += BigInt(entry.amount);
  }
  const net = credits - debits;
  const opening = BigInt(statement.openingBalance ?? 0);
  const closing = opening + net;
  const createdAt = statement.createdAt.toISOString();
  const statementDate = createdAt.slice(0, 10);

  const document = create({ version: '1.0', encoding: 'UTF-8' }).ele('urn:iso:std:iso:20022:tech:xsd:camt.053.001.02', 'Document');
  const root = document.ele('BkToCstmrStmt');
  root.ele('GrpHdr').ele('MsgId').txt(`MSG-${statement.statementId}`).up().ele('CreDtTm').txt(createdAt);
  const stmt = root.ele('Stmt');
  stmt.ele('Id').txt(statement.statementId);
  stmt.ele('CreDtTm').txt(createdAt);
  const account = stmt.ele('Acct');
  account
    .ele('Id')
    .ele('Othr')
    .ele('Id')
    .txt(`${statement.account.sortCode.replaceAll('-', '')}${statement.account.accountNumber}`)
    .up()
    .ele('SchmeNm')
    .ele('Cd')
    .txt('BBAN');
  account.ele('Ccy').txt(currency);
  for (const [type, amount] of [
    ['OPBD', opening],
    ['CLBD', closing],
  ] as const) {
    const balance = stmt.ele('Bal');
    balance.ele('Tp').ele('CdOrPrtry').ele('Cd').txt(type);
    balance.ele('Amt', { Ccy: currency }).txt(money(absolute(amount)));
    balance.ele('CdtDbtInd').txt(indicator(amount));
    balance.ele('Dt').ele('Dt').txt(statementDate);
  }
  const totals = stmt.ele('TxsSummry');
  const all = totals.ele('TtlNtries');
  all.ele('NbOfNtries').txt(String(statement.entries.length));
  all.ele('Sum').txt(money(credits + debits));
  all.ele('TtlNetNtryAmt').txt(money(absolute(net)));
  all.ele('CdtDbtInd').txt(indicator(net));
  totals.ele('TtlCdtNtries').ele('NbOfNtries').txt(String(creditCount)).up().ele('Sum').txt(money(credits));
  totals
    .ele('TtlDbtNtries')
    .ele('NbOfNtries')
    .txt(String(statement.entries.length - creditCount))
    .up()
    .ele('Sum')
    .txt(money(debits));
  for (const entry of statement.entries) {
    const ntry = stmt.ele('Ntry');
    ntry.ele('NtryRef').txt(entry.bankReference);
    ntry.ele('Amt', { Ccy: currency }).txt(money(entry.amount));
    ntry.ele('CdtDbtInd').txt(entry.direction === 'credit' ? 'CRDT' : 'DBIT');
    ntry.ele('Sts').txt('BOOK');
    ntry.ele('BookgDt').ele('Dt').txt(entry.bookingDate);
    ntry.ele('ValDt').ele('Dt').txt(entry.bookingDate);
    ntry.ele('AcctSvcrRef').txt(entry.bankReference);
    ntry
      .ele('BkTxCd')
      .ele('Domn')
      .ele('Cd')
      .txt('PMNT')
      .up()
      .ele('Fmly')
      .ele('Cd')
      .txt(entry.direction === 'credit' ? 'RCDT' : 'ICDT')
      .up()
      .ele('SubFmlyCd')
      .txt('DMCT');
    const details = ntry.ele('NtryDtls').ele('TxDtls');
    details.ele('Refs').ele('AcctSvcrRef').txt(entry.bankReference);
    if (entry.debtorName) details.ele('RltdPties').ele('Dbtr').ele('Nm').txt(entry.debtorName);
    if (entry.reference) details.ele('RmtInf').ele('Ustrd').txt(entry.reference);
  }
  return document.end({ prettyPrint: true });
}
