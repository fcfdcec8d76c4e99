import { create } from 'xmlbuilder2';
import { formatMinorUnits } from '../money/major-units.ts';

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
  entries: readonly SimulatedEntry[];
}

/**
 * An end-of-day statement as a bank would send it: ISO 20022 camt.053.001.02, one Stmt, the account
 * named by its sort code and number (Othr/Id, scheme BBAN), one booked entry per credit or debit with
 * the payer's reference as unstructured remittance information. The demo's bank and the benchmark
 * write their statements with it; the service reads them like any bank's.
 */
export function simulatedCamt053(statement: SimulatedStatement): string {
  const document = create({ version: '1.0', encoding: 'UTF-8' }).ele('urn:iso:std:iso:20022:tech:xsd:camt.053.001.02', 'Document');
  const root = document.ele('BkToCstmrStmt');
  root.ele('GrpHdr').ele('MsgId').txt(`MSG-${statement.statementId}`).up().ele('CreDtTm').txt(statement.createdAt.toISOString());
  const stmt = root.ele('Stmt');
  stmt.ele('Id').txt(statement.statementId);
  stmt.ele('CreDtTm').txt(statement.createdAt.toISOString());
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
  account.ele('Ccy').txt(statement.currency);
  for (const entry of statement.entries) {
    const ntry = stmt.ele('Ntry');
    ntry.ele('NtryRef').txt(entry.bankReference);
    ntry.ele('Amt', { Ccy: statement.currency }).txt(formatMinorUnits(entry.amount, statement.currency));
    ntry.ele('CdtDbtInd').txt(entry.direction === 'credit' ? 'CRDT' : 'DBIT');
    ntry.ele('Sts').txt('BOOK');
    ntry.ele('BookgDt').ele('Dt').txt(entry.bookingDate);
    ntry.ele('ValDt').ele('Dt').txt(entry.bookingDate);
    ntry.ele('AcctSvcrRef').txt(entry.bankReference);
    ntry.ele('BkTxCd').ele('Domn').ele('Cd').txt('PMNT').up().ele('Fmly').ele('Cd').txt(entry.direction === 'credit' ? 'RCDT' : 'ICDT').up().ele('SubFmlyCd').txt('DMCT');
    const details = ntry.ele('NtryDtls').ele('TxDtls');
    details.ele('Refs').ele('AcctSvcrRef').txt(entry.bankReference);
    if (entry.debtorName) details.ele('RltdPties').ele('Dbtr').ele('Nm').txt(entry.debtorName);
    if (entry.reference) details.ele('RmtInf').ele('Ustrd').txt(entry.reference);
  }
  return document.end({ prettyPrint: true });
}
