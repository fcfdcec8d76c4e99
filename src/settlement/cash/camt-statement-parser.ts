import { SaxesParser, type SaxesTagNS } from 'saxes';
import { formatMoney } from '../../platform/money/money-text.ts';
import {
  type FilePosition,
  type ParsedStatement,
  type ParsedStatementFile,
  type StatementBalance,
  type StatementEntry,
  type StatementSummary,
  StatementRejected,
  invalidDateReason,
  readStatementAmount,
  readStatementDate,
  statementCurrencyExponent,
  statementDate,
  ukAccountFromDigits,
  ukAccountFromIban,
} from './bank-statement.ts';

// ISO 20022 bank-to-customer cash management, read as a stream with saxes: camt.053 (end-of-day
// statement, BkToCstmrStmt/Stmt) and camt.054 (debit/credit notification, BkToCstmrDbtCdtNtfctn/Ntfctn).
// Only the elements below are read; everything else is skipped. Versions 02 to 13 share these paths,
// except where noted (v02/v03: Sts as text, TxsSummry/TtlNtries/TtlNetNtryAmt + CdtDbtInd, no
// TxDtls/Amt; v04+: Sts/Cd, StmtPgntn/NtfctnPgntn, TtlNetNtry/Amt + CdtDbtInd; v08+: Dbtr/Pty/Nm).
//
// What refuses the whole file: not XML, no camt.053/camt.054 Document (as the root, or anywhere inside
// another root: a business application header envelope), no Stmt/Ntfctn, a statement without Id or
// an account that is not a UK one, statement-level figures that cannot be read (balances, totals,
// pagination). What does not: an entry that cannot be used as it stands, which is kept with its
// `problem` (the exceptions queue's reason) while the rest of the file is read.
//
// Security: a DOCTYPE is refused outright, so no DTD is ever read and no entity is ever declared; an
// entity reference other than the five predefined ones (&amp; &lt; &gt; &quot; &apos;) is refused where
// it appears. Character references (&#233;) are plain text and allowed.

const CAMT_NAMESPACE = /^urn:iso:std:iso:20022:tech:xsd:camt\.(053|054)\.001\.(\d{2})$/;
const OLDEST_VERSION = 2;
const NEWEST_VERSION = 13;

const LAYOUT = {
  'camt.053': { group: 'BkToCstmrStmt', statement: 'Stmt' },
  'camt.054': { group: 'BkToCstmrDbtCdtNtfctn', statement: 'Ntfctn' },
} as const;

type CamtFormat = keyof typeof LAYOUT;

const PREDEFINED_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The path (below the Stmt/Ntfctn) of one transaction's details, and of its references. */
const TX = 'Ntry/NtryDtls/TxDtls';
const TX_REFS = `${TX}/Refs/`;

interface AmountText {
  text: string;
  currency: string | undefined;
}

interface CodeInProgress {
  domain: string | null;
  family: string | null;
  subFamily: string | null;
  proprietary: string | null;
}

/** One transaction's details inside an entry (NtryDtls/TxDtls). */
interface TransactionDetails {
  position: FilePosition;
  /** TxDtls/Amt (v04+). */
  amount: AmountText | undefined;
  /** TxDtls/AmtDtls/TxAmt/Amt: the transaction's amount where TxDtls/Amt is not given (v02/v03). */
  transactionAmount: AmountText | undefined;
  direction: string | undefined;
  accountServicerReference: string | undefined;
  references: string[];
  structured: string[];
  unstructured: string[];
  additionalInformation: string | undefined;
  debtorName: string | undefined;
  debtorAccount: string | undefined;
  bankTransactionCode: CodeInProgress | undefined;
  /** undefined: no RtrInf; '' an RtrInf without a reason code. */
  returnReason: string | undefined;
}

/** An Ntry as read so far; checked and turned into StatementEntry values when it closes. */
interface EntryInProgress {
  position: FilePosition;
  amount: AmountText | undefined;
  direction: string | undefined;
  reversal: boolean;
  status: string | undefined;
  bookingDate: string | undefined;
  valueDate: string | undefined;
  accountServicerReference: string | undefined;
  entryReference: string | undefined;
  additionalInformation: string | undefined;
  bankTransactionCode: CodeInProgress | undefined;
  transactions: TransactionDetails[];
}

interface BalanceInProgress {
  position: FilePosition;
  type: string | undefined;
  amount: AmountText | undefined;
  direction: string | undefined;
  date: string | undefined;
}

/** TxsSummry's texts, read into numbers when the statement closes (its sums need the statement's currency). */
interface SummaryInProgress {
  position: FilePosition;
  entries: { count?: string; sum?: string; net?: string; netDirection?: string } | undefined;
  credits: { count?: string; sum?: string } | undefined;
  debits: { count?: string; sum?: string } | undefined;
}

interface Pagination {
  number: string | undefined;
  last: string | undefined;
  position: FilePosition;
}

interface StatementInProgress {
  position: FilePosition;
  id: string | undefined;
  pagination: Pagination | undefined;
  electronicSequenceNumber: string | null;
  legalSequenceNumber: string | null;
  creationDate: string | undefined;
  toDate: string | undefined;
  iban: { text: string; position: FilePosition } | undefined;
  otherId: { text: string; position: FilePosition } | undefined;
  currency: string | null;
  account: { sortCode: string; accountNumber: string } | undefined;
  balances: StatementBalance[];
  balance: BalanceInProgress | undefined;
  summary: SummaryInProgress | undefined;
  entries: StatementEntry[];
}

/**
 * Parses one camt.053 or camt.054 document from its text chunks: every Stmt (or Ntfctn) in it, in
 * document order. Booked entries only (Sts BOOK); pending and information-only entries are skipped.
 * An entry whose NtryDtls has several TxDtls each with its own amount (a batch booking) becomes one
 * entry per TxDtls (bank reference `<reference>/<n>`, n from 1, `batch` set) when their signed total is
 * the entry's amount; otherwise, or when some TxDtls have no amount, it stays one entry.
 */
export async function parseCamtStatement(chunks: AsyncIterable<string>): Promise<ParsedStatementFile> {
  const reader = new CamtReader();
  for await (const chunk of chunks) reader.write(chunk);
  return reader.finish();
}

class CamtReader {
  readonly #parser = new SaxesParser({ xmlns: true, position: true });
  /** Local names of the open elements from the root; an element of another namespace than the Document's is '#foreign'. */
  readonly #open: string[] = [];
  /**
   * Each open element's path, built as it opens: below the Stmt/Ntfctn relative to it ('Ntry/Amt'),
   * under the group its own name first ('GrpHdr/MsgPgntn/PgNb'); '' above and outside the Document.
   */
  readonly #paths: string[] = [];
  #root: { local: string; uri: string; position: FilePosition } | undefined;
  /** Depth of the camt Document: 0 when it is the root, more inside an envelope; -1 until it is found. */
  #documentDepth = -1;
  /** The first camt Document has closed: anything after it is not read. */
  #documentClosed = false;
  #namespace: string | undefined;
  #format: CamtFormat | undefined;
  #text = '';
  #attributes: Record<string, string> = {};
  #tagPosition: FilePosition = { line: 1 };
  #messagePagination: Pagination | undefined;
  #messageCreationDate: string | undefined;
  #statement: StatementInProgress | undefined;
  #entry: EntryInProgress | undefined;
  #transaction: TransactionDetails | undefined;
  readonly #statements: ParsedStatement[] = [];

  constructor() {
    const parser = this.#parser;
    // No 'error' handler: saxes then throws its own Error, which #feed turns into a refusal. With a
    // seventh handler registered, saxes itself ran 2.5x slower on Node 20 (0.84 against 0.34 s for a
    // 10,000-entry statement, measured): more than all the import's writes. Keep it to six.
    parser.on('doctype', () => {
      throw new StatementRejected('a DOCTYPE declaration is refused: statements may not carry a DTD or entity declarations', this.#here());
    });
    // saxes resolves a named entity through this table; a lookup of anything but the predefined five
    // refuses the file, naming the entity, instead of saxes's generic "undefined entity".
    parser.ENTITIES = new Proxy(
      { ...PREDEFINED_ENTITIES },
      {
        get: (target, name) => {
          if (typeof name !== 'string') return undefined;
          if (Object.hasOwn(target, name)) return target[name];
          throw new StatementRejected(`entity reference &${String(name)}; is refused: only &amp; &lt; &gt; &quot; &apos; and character references are allowed`, this.#here());
        },
      },
    );
    parser.on('opentagstart', (tag) => {
      // saxes stands just past the name and the character after it: step back to the '<'.
      this.#tagPosition = { line: parser.line, column: parser.column - tag.name.length - 1 };
    });
    parser.on('opentag', (tag) => this.#opened(tag));
    parser.on('text', (text) => {
      this.#text += text;
    });
    parser.on('cdata', (text) => {
      this.#text += text;
    });
    parser.on('closetag', () => this.#closed());
  }

  write(chunk: string): void {
    this.#feed(chunk);
  }

  finish(): ParsedStatementFile {
    this.#feed(null);
    const root = this.#root;
    if (this.#format === undefined) {
      // The file ended without a camt Document anywhere (the root itself was checked when it opened).
      const where = root === undefined ? 'no root element' : `the root element is ${root.local}${root.uri === '' ? ' without a namespace' : ` in namespace ${root.uri}`}`;
      throw new StatementRejected(`not a camt.053 or camt.054 document: ${where}, and no camt.053 or camt.054 Document is inside it`, root?.position);
    }
    if (this.#statements.length === 0) throw new StatementRejected(`no ${LAYOUT[this.#format].statement} element in the document`);
    return { format: this.#format, statements: this.#statements };
  }

  /** Writes to saxes (null closes it); the plain Error saxes throws for malformed XML becomes a refusal at its position. */
  #feed(chunk: string | null): void {
    try {
      if (chunk === null) this.#parser.close();
      else this.#parser.write(chunk);
    } catch (error) {
      // Ours are StatementRejected; a TypeError or the like is a bug and passes through unchanged.
      if (error instanceof Error && error.constructor === Error) {
        throw new StatementRejected(`malformed XML: ${error.message.replace(/^\d+:\d+: /, '')}`, this.#here());
      }
      throw error;
    }
  }

  #here(): FilePosition {
    return { line: this.#parser.line, column: this.#parser.column };
  }

  #opened(tag: SaxesTagNS): void {
    const position = this.#tagPosition;
    const depth = this.#open.length;
    if (depth === 0) this.#openedRoot(tag, position);
    else if (this.#documentDepth < 0 && tag.local === 'Document' && CAMT_NAMESPACE.test(tag.uri)) this.#openedDocument(tag, position, depth);
    const local = tag.uri === this.#namespace ? tag.local : '#foreign';
    this.#open.push(local);
    this.#text = '';
    const relative = this.#documentDepth < 0 || this.#documentClosed ? -1 : depth - this.#documentDepth;
    if (relative < 2) {
      this.#paths.push('');
      if (relative === 1 && this.#format !== undefined && local !== LAYOUT[this.#format].group) {
        throw new StatementRejected(`expected ${LAYOUT[this.#format].group} under Document, found ${tag.name}`, position);
      }
      return;
    }
    const format = this.#format!;
    const parent = this.#paths[depth - 1]!;
    const path = relative === 2 ? (local === LAYOUT[format].statement ? '.' : local) : parent === '.' ? local : `${parent}/${local}`;
    this.#paths.push(path);
    this.#attributes = {};
    for (const attribute of Object.values(tag.attributes)) {
      if (attribute.uri === '') this.#attributes[attribute.local] = attribute.value;
    }
    if (path === '.') {
      this.#statement = {
        position,
        id: undefined,
        pagination: undefined,
        electronicSequenceNumber: null,
        legalSequenceNumber: null,
        creationDate: undefined,
        toDate: undefined,
        iban: undefined,
        otherId: undefined,
        currency: null,
        account: undefined,
        balances: [],
        balance: undefined,
        summary: undefined,
        entries: [],
      };
      return;
    }
    const statement = this.#statement;
    if (statement === undefined) {
      if (path === 'GrpHdr/MsgPgntn') this.#messagePagination = { number: undefined, last: undefined, position };
      return;
    }
    switch (path) {
      case 'Ntry':
        this.#entry = {
          position,
          amount: undefined,
          direction: undefined,
          reversal: false,
          status: undefined,
          bookingDate: undefined,
          valueDate: undefined,
          accountServicerReference: undefined,
          entryReference: undefined,
          additionalInformation: undefined,
          bankTransactionCode: undefined,
          transactions: [],
        };
        return;
      case TX:
        if (this.#entry === undefined) return;
        this.#transaction = {
          position,
          amount: undefined,
          transactionAmount: undefined,
          direction: undefined,
          accountServicerReference: undefined,
          references: [],
          structured: [],
          unstructured: [],
          additionalInformation: undefined,
          debtorName: undefined,
          debtorAccount: undefined,
          bankTransactionCode: undefined,
          returnReason: undefined,
        };
        this.#entry.transactions.push(this.#transaction);
        return;
      case 'Bal':
        statement.balance = { position, type: undefined, amount: undefined, direction: undefined, date: undefined };
        return;
      case 'TxsSummry':
        statement.summary = { position, entries: undefined, credits: undefined, debits: undefined };
        return;
      case 'StmtPgntn':
      case 'NtfctnPgntn':
        statement.pagination = { number: undefined, last: undefined, position };
        return;
      default:
    }
  }

  /** The root is the camt Document, or an envelope around one (checked for one when the file ends). */
  #openedRoot(tag: SaxesTagNS, position: FilePosition): void {
    this.#root = { local: tag.local, uri: tag.uri, position };
    if (tag.local === 'Document' || CAMT_NAMESPACE.test(tag.uri)) {
      if (tag.local !== 'Document' || !CAMT_NAMESPACE.test(tag.uri)) {
        throw new StatementRejected(
          `not a camt.053 or camt.054 document: the root element is ${tag.local}${tag.uri === '' ? ' without a namespace' : ` in namespace ${tag.uri}`}`,
          position,
        );
      }
      this.#openedDocument(tag, position, 0);
    }
  }

  #openedDocument(tag: SaxesTagNS, position: FilePosition, depth: number): void {
    const [, message = '', version = ''] = CAMT_NAMESPACE.exec(tag.uri) ?? [];
    if (Number(version) < OLDEST_VERSION || Number(version) > NEWEST_VERSION) {
      throw new StatementRejected(`camt.${message}.001.${version} is not a supported version (02 to ${NEWEST_VERSION})`, position);
    }
    this.#documentDepth = depth;
    this.#namespace = tag.uri;
    this.#format = `camt.${message}` as CamtFormat;
  }

  #closed(): void {
    const path = this.#paths.pop()!;
    const depth = this.#open.length - 1;
    this.#open.pop();
    // Only a leaf's own text counts: an element holding children gets none of theirs.
    const value = this.#text.trim();
    this.#text = '';
    if (path === '') {
      if (depth === this.#documentDepth && !this.#documentClosed) this.#documentClosed = true;
      return;
    }
    if (path === '.') {
      const statement = this.#statement;
      this.#statement = undefined;
      if (statement !== undefined) this.#statements.push(this.#closeStatement(statement));
      return;
    }
    const statement = this.#statement;
    if (statement === undefined) {
      this.#groupHeaderValue(path, value);
      return;
    }
    const transaction = this.#transaction;
    if (transaction !== undefined && path.startsWith(TX)) {
      this.#transactionValue(transaction, path, value);
      return;
    }
    const entry = this.#entry;
    if (entry !== undefined && path.startsWith('Ntry')) {
      if (path === 'Ntry') {
        this.#closeEntry(entry, statement);
        this.#entry = undefined;
      } else {
        this.#entryValue(entry, path, value);
      }
      return;
    }
    this.#statementValue(statement, path, value);
  }

  #groupHeaderValue(path: string, value: string): void {
    switch (path) {
      case 'GrpHdr/CreDtTm':
        this.#messageCreationDate = value;
        return;
      case 'GrpHdr/MsgPgntn/PgNb':
        if (this.#messagePagination !== undefined) this.#messagePagination.number = value;
        return;
      case 'GrpHdr/MsgPgntn/LastPgInd':
        if (this.#messagePagination !== undefined) this.#messagePagination.last = value;
        return;
      default:
    }
  }

  #statementValue(statement: StatementInProgress, path: string, value: string): void {
    const position = this.#tagPosition;
    switch (path) {
      case 'Id':
        statement.id = value;
        return;
      case 'StmtPgntn/PgNb':
      case 'NtfctnPgntn/PgNb':
        if (statement.pagination !== undefined) statement.pagination.number = value;
        return;
      case 'StmtPgntn/LastPgInd':
      case 'NtfctnPgntn/LastPgInd':
        if (statement.pagination !== undefined) statement.pagination.last = value;
        return;
      case 'ElctrncSeqNb':
        statement.electronicSequenceNumber = value === '' ? null : value;
        return;
      case 'LglSeqNb':
        statement.legalSequenceNumber = value === '' ? null : value;
        return;
      case 'CreDtTm':
        statement.creationDate = value;
        return;
      case 'FrToDt/ToDtTm':
        statement.toDate = value;
        return;
      case 'Acct/Id/IBAN':
        statement.iban = { text: value, position };
        return;
      case 'Acct/Id/Othr/Id':
        statement.otherId = { text: value, position };
        return;
      case 'Acct/Ccy':
        statementCurrencyExponent(value, position);
        statement.currency = value;
        return;
      case 'Acct':
        statement.account = this.#account(statement);
        return;
      default:
    }
    const balance = statement.balance;
    if (balance !== undefined && path.startsWith('Bal')) {
      this.#balanceValue(statement, balance, path, value);
      return;
    }
    const summary = statement.summary;
    if (summary !== undefined && path.startsWith('TxsSummry/')) this.#summaryValue(summary, path, value);
  }

  #balanceValue(statement: StatementInProgress, balance: BalanceInProgress, path: string, value: string): void {
    switch (path) {
      case 'Bal':
        statement.balances.push(this.#closeBalance(balance, statement));
        statement.balance = undefined;
        return;
      case 'Bal/Tp/CdOrPrtry/Cd':
      case 'Bal/Tp/CdOrPrtry/Prtry':
        balance.type = value;
        return;
      case 'Bal/Amt':
        balance.amount = { text: value, currency: this.#attributes.Ccy };
        return;
      case 'Bal/CdtDbtInd':
        balance.direction = value;
        return;
      case 'Bal/Dt/Dt':
      case 'Bal/Dt/DtTm':
        balance.date = value;
        return;
      default:
    }
  }

  #summaryValue(summary: SummaryInProgress, path: string, value: string): void {
    switch (path) {
      case 'TxsSummry/TtlNtries/NbOfNtries':
        summary.entries = { ...summary.entries, count: value };
        return;
      case 'TxsSummry/TtlNtries/Sum':
        summary.entries = { ...summary.entries, sum: value };
        return;
      case 'TxsSummry/TtlNtries/TtlNetNtry/Amt':
      case 'TxsSummry/TtlNtries/TtlNetNtryAmt':
        summary.entries = { ...summary.entries, net: value };
        return;
      case 'TxsSummry/TtlNtries/TtlNetNtry/CdtDbtInd':
      case 'TxsSummry/TtlNtries/CdtDbtInd':
        summary.entries = { ...summary.entries, netDirection: value };
        return;
      case 'TxsSummry/TtlNtries':
        summary.entries ??= {};
        return;
      case 'TxsSummry/TtlCdtNtries/NbOfNtries':
        summary.credits = { ...summary.credits, count: value };
        return;
      case 'TxsSummry/TtlCdtNtries/Sum':
        summary.credits = { ...summary.credits, sum: value };
        return;
      case 'TxsSummry/TtlCdtNtries':
        summary.credits ??= {};
        return;
      case 'TxsSummry/TtlDbtNtries/NbOfNtries':
        summary.debits = { ...summary.debits, count: value };
        return;
      case 'TxsSummry/TtlDbtNtries/Sum':
        summary.debits = { ...summary.debits, sum: value };
        return;
      case 'TxsSummry/TtlDbtNtries':
        summary.debits ??= {};
        return;
      default:
    }
  }

  #entryValue(entry: EntryInProgress, path: string, value: string): void {
    switch (path) {
      case 'Ntry/Amt':
        entry.amount = { text: value, currency: this.#attributes.Ccy };
        return;
      case 'Ntry/CdtDbtInd':
        entry.direction = value;
        return;
      case 'Ntry/RvslInd':
        entry.reversal = value === 'true' || value === '1';
        return;
      case 'Ntry/Sts':
      case 'Ntry/Sts/Cd':
        // v02/v03 write the code as the element's text; v04+ wrap it in Cd. Sts/Prtry is not a booked code.
        if (value !== '') entry.status = value;
        return;
      case 'Ntry/Sts/Prtry':
        entry.status = value;
        return;
      case 'Ntry/BookgDt/Dt':
      case 'Ntry/BookgDt/DtTm':
        entry.bookingDate = value;
        return;
      case 'Ntry/ValDt/Dt':
      case 'Ntry/ValDt/DtTm':
        entry.valueDate = value;
        return;
      case 'Ntry/AcctSvcrRef':
        entry.accountServicerReference = value;
        return;
      case 'Ntry/NtryRef':
        entry.entryReference = value;
        return;
      case 'Ntry/AddtlNtryInf':
        if (value !== '') entry.additionalInformation = value;
        return;
      case 'Ntry/BkTxCd/Domn/Cd':
        (entry.bankTransactionCode ??= emptyCode()).domain = value;
        return;
      case 'Ntry/BkTxCd/Domn/Fmly/Cd':
        (entry.bankTransactionCode ??= emptyCode()).family = value;
        return;
      case 'Ntry/BkTxCd/Domn/Fmly/SubFmlyCd':
        (entry.bankTransactionCode ??= emptyCode()).subFamily = value;
        return;
      case 'Ntry/BkTxCd/Prtry/Cd':
        (entry.bankTransactionCode ??= emptyCode()).proprietary = value;
        return;
      default:
    }
  }

  #transactionValue(transaction: TransactionDetails, path: string, value: string): void {
    if (path.startsWith(TX_REFS)) {
      const reference = path.slice(TX_REFS.length);
      if (reference === 'AcctSvcrRef') transaction.accountServicerReference = value;
      else if (value !== '' && value !== 'NOTPROVIDED' && reference !== 'Prtry/Tp') transaction.references.push(value);
      return;
    }
    switch (path) {
      case TX:
        this.#transaction = undefined;
        return;
      case `${TX}/Amt`:
        transaction.amount = { text: value, currency: this.#attributes.Ccy };
        return;
      case `${TX}/AmtDtls/TxAmt/Amt`:
        transaction.transactionAmount = { text: value, currency: this.#attributes.Ccy };
        return;
      case `${TX}/CdtDbtInd`:
        transaction.direction = value;
        return;
      case `${TX}/RmtInf/Ustrd`:
        if (value !== '') transaction.unstructured.push(value);
        return;
      case `${TX}/RmtInf/Strd/CdtrRefInf/Ref`:
        if (value !== '') transaction.structured.push(value);
        return;
      case `${TX}/AddtlTxInf`:
        if (value !== '') transaction.additionalInformation = value;
        return;
      case `${TX}/RltdPties/Dbtr/Nm`:
      case `${TX}/RltdPties/Dbtr/Pty/Nm`:
        transaction.debtorName = value;
        return;
      case `${TX}/RltdPties/DbtrAcct/Id/IBAN`:
      case `${TX}/RltdPties/DbtrAcct/Id/Othr/Id`:
        transaction.debtorAccount = value.replace(/\s+/g, '');
        return;
      case `${TX}/BkTxCd/Domn/Cd`:
        (transaction.bankTransactionCode ??= emptyCode()).domain = value;
        return;
      case `${TX}/BkTxCd/Domn/Fmly/Cd`:
        (transaction.bankTransactionCode ??= emptyCode()).family = value;
        return;
      case `${TX}/BkTxCd/Domn/Fmly/SubFmlyCd`:
        (transaction.bankTransactionCode ??= emptyCode()).subFamily = value;
        return;
      case `${TX}/BkTxCd/Prtry/Cd`:
        (transaction.bankTransactionCode ??= emptyCode()).proprietary = value;
        return;
      case `${TX}/RtrInf/Rsn/Cd`:
      case `${TX}/RtrInf/Rsn/Prtry`:
        transaction.returnReason = value;
        return;
      case `${TX}/RtrInf`:
        transaction.returnReason ??= '';
        return;
      default:
    }
  }

  #element(): string {
    return LAYOUT[this.#format ?? 'camt.053'].statement;
  }

  #account(statement: StatementInProgress): { sortCode: string; accountNumber: string } {
    if (statement.iban !== undefined) return ukAccountFromIban(statement.iban.text, statement.iban.position);
    if (statement.otherId !== undefined) return ukAccountFromDigits(statement.otherId.text, statement.otherId.position);
    throw new StatementRejected(`${this.#element()}/Acct is missing Id/IBAN or Id/Othr/Id`, statement.position);
  }

  #closeBalance(balance: BalanceInProgress, statement: StatementInProgress): StatementBalance {
    const { position } = balance;
    if (balance.type === undefined || balance.type === '') throw new StatementRejected('Bal is missing Tp/CdOrPrtry/Cd or Prtry', position);
    const what = `balance ${balance.type}`;
    if (balance.amount === undefined) throw new StatementRejected(`${what} is missing Amt`, position);
    const currency = balance.amount.currency;
    if (currency === undefined || currency === '') throw new StatementRejected(`${what}: Amt has no Ccy attribute`, position);
    statementCurrencyExponent(currency, position);
    if (statement.currency !== null && currency !== statement.currency) {
      throw new StatementRejected(`${what} is in ${currency}, the account in ${statement.currency}`, position);
    }
    const reading = readStatementAmount(balance.amount.text, currency, { allowZero: true });
    if (reading.problem !== undefined) throw new StatementRejected(`${what}: ${reading.problem}`, position);
    const sign = signOf(balance.direction, `${what}: CdtDbtInd`, position);
    const date = balance.date === undefined ? null : statementDate(balance.date, `${what} date`, position);
    return { type: balance.type, amount: reading.minor === 0 ? 0 : sign * reading.minor, currency, date, position };
  }

  #closeStatement(statement: StatementInProgress): ParsedStatement {
    const element = this.#element();
    if (statement.id === undefined || statement.id === '') throw new StatementRejected(`${element} is missing Id`, statement.position);
    if (statement.account === undefined) throw new StatementRejected(`${element} is missing Acct`, statement.position);
    const pagination = statement.pagination ?? this.#messagePagination;
    return {
      format: this.#format!,
      statementId: statement.id,
      page:
        pagination === undefined
          ? { number: 1, last: true }
          : page(pagination, statement.pagination === undefined ? 'MsgPgntn' : `${element === 'Stmt' ? 'Stmt' : 'Ntfctn'}Pgntn`),
      electronicSequenceNumber: statement.electronicSequenceNumber,
      legalSequenceNumber: statement.legalSequenceNumber,
      account: statement.account,
      currency: statement.currency,
      balances: statement.balances,
      summary:
        statement.summary === undefined ? null : summaryOf(statement.summary, statement.currency ?? statement.balances[0]?.currency ?? commonCurrency(statement.entries)),
      entries: statement.entries,
    };
  }

  #closeEntry(entry: EntryInProgress, statement: StatementInProgress): void {
    if (statement.account === undefined) {
      throw new StatementRejected(`Ntry before the ${this.#element()}/Acct it belongs to`, entry.position);
    }
    const problems: string[] = [];
    if (entry.status === undefined) problems.push('Ntry is missing Sts');
    else if (entry.status !== 'BOOK') return;

    const accountCurrency = statement.currency;
    const currency = entry.amount?.currency || accountCurrency || '';
    let amount = 0;
    if (entry.amount === undefined) {
      problems.push('Ntry is missing Amt');
    } else {
      if (entry.amount.currency === undefined || entry.amount.currency === '') problems.push('Ntry/Amt has no Ccy attribute');
      else if (accountCurrency !== null && entry.amount.currency !== accountCurrency) {
        problems.push(`the entry's currency ${entry.amount.currency} differs from the account's ${accountCurrency}`);
      }
      if (currency !== '') {
        const reading = readStatementAmount(entry.amount.text, currency, { allowZero: true });
        if (reading.problem !== undefined) problems.push(reading.problem);
        else if (reading.minor === 0) problems.push("the entry's amount is zero");
        else amount = reading.minor;
      }
    }
    let direction: 'credit' | 'debit' = 'credit';
    if (entry.direction === undefined) problems.push('Ntry is missing CdtDbtInd');
    else {
      const read = directionOf(entry.direction);
      if (read === null) problems.push(`CdtDbtInd "${entry.direction}" is neither CRDT nor DBIT`);
      else direction = read;
    }
    let valueDate: string | null = null;
    if (entry.valueDate !== undefined) {
      valueDate = readStatementDate(entry.valueDate);
      if (valueDate === null) problems.push(invalidDateReason('ValDt', entry.valueDate));
    }
    let bookingDate = entry.bookingDate === undefined ? null : readStatementDate(entry.bookingDate);
    if (bookingDate === null) {
      problems.push(entry.bookingDate === undefined ? 'Ntry is missing BookgDt' : invalidDateReason('BookgDt', entry.bookingDate));
      bookingDate = valueDate ?? this.#statementDate(statement);
    }

    const index = statement.entries.length;
    const reference = entry.accountServicerReference || entry.entryReference || `#${index + 1}`;
    const transactions = entry.transactions;
    if (problems.length === 0 && transactions.length >= 2 && entry.amount !== undefined) {
      const split = batchParts(transactions, { amount, direction, currency, text: entry.amount.text });
      if (split !== null && 'problem' in split) problems.push(split.problem);
      else if (split !== null) {
        for (const [number, part] of split.entries()) {
          const details = transactions[number]!;
          statement.entries.push(
            entryOf(entry, [details], {
              position: details.position,
              index: index + number,
              bankReference: `${reference}/${number + 1}`,
              accountServicerReference: details.accountServicerReference || entry.accountServicerReference || null,
              batch: { amount, part: number + 1, parts: split.length },
              direction: part.direction,
              amount: part.amount,
              currency,
              bookingDate,
              valueDate,
              problem: null,
            }),
          );
        }
        return;
      }
    }
    statement.entries.push(
      entryOf(entry, transactions, {
        position: entry.position,
        index,
        bankReference: reference,
        accountServicerReference: entry.accountServicerReference || null,
        batch: null,
        direction,
        amount,
        currency,
        bookingDate,
        valueDate,
        problem: problems.length === 0 ? null : problems.join('; '),
      }),
    );
  }

  /** The statement's own date, for an entry whose booking date cannot be read: FrToDt/ToDtTm, else CreDtTm, else the message's. */
  #statementDate(statement: StatementInProgress): string {
    for (const text of [statement.toDate, statement.creationDate, this.#messageCreationDate]) {
      const date = text === undefined ? null : readStatementDate(text);
      if (date !== null) return date;
    }
    return '';
  }
}

function emptyCode(): CodeInProgress {
  return { domain: null, family: null, subFamily: null, proprietary: null };
}

function directionOf(indicator: string): 'credit' | 'debit' | null {
  if (indicator === 'CRDT') return 'credit';
  if (indicator === 'DBIT') return 'debit';
  return null;
}

/** +1 for CRDT, -1 for DBIT; anything else refuses the file (a figure of the statement, not of an entry). */
function signOf(indicator: string | undefined, what: string, position: FilePosition): 1 | -1 {
  if (indicator === 'CRDT') return 1;
  if (indicator === 'DBIT') return -1;
  throw new StatementRejected(indicator === undefined ? `${what} is missing` : `${what} "${indicator}" is neither CRDT nor DBIT`, position);
}

function page(pagination: Pagination, element: string): { number: number; last: boolean } {
  const { number, last, position } = pagination;
  if (number === undefined || !/^\d{1,5}$/.test(number))
    throw new StatementRejected(`${element}/PgNb ${number === undefined ? 'is missing' : `"${number}" is not a page number`}`, position);
  if (last !== 'true' && last !== 'false' && last !== '1' && last !== '0') {
    throw new StatementRejected(`${element}/LastPgInd ${last === undefined ? 'is missing' : `"${last}" is neither true nor false`}`, position);
  }
  return { number: Number(number), last: last === 'true' || last === '1' };
}

/** The one currency all the entries are in, if they share one. */
function commonCurrency(entries: readonly StatementEntry[]): string | null {
  const first = entries[0]?.currency;
  if (first === undefined || first === '') return null;
  return entries.every((entry) => entry.currency === first) ? first : null;
}

/** TxsSummry's figures; its sums are in the statement's currency (null when the statement names none). */
function summaryOf(summary: SummaryInProgress, currency: string | null): StatementSummary {
  const { position } = summary;
  const count = (text: string | undefined, what: string): number | null => {
    if (text === undefined) return null;
    if (!/^\d{1,15}$/.test(text)) throw new StatementRejected(`TxsSummry/${what}/NbOfNtries "${text}" is not a number of entries`, position);
    return Number(text);
  };
  const sum = (text: string | undefined, what: string): number | null => {
    if (text === undefined || currency === null) return null;
    const reading = readStatementAmount(text, currency, { allowZero: true });
    if (reading.problem !== undefined) throw new StatementRejected(`TxsSummry/${what}/Sum: ${reading.problem}`, position);
    return reading.minor;
  };
  const entries = summary.entries;
  let net: number | null = null;
  if (entries?.net !== undefined && entries.netDirection !== undefined && currency !== null) {
    const reading = readStatementAmount(entries.net, currency, { allowZero: true });
    if (reading.problem !== undefined) throw new StatementRejected(`TxsSummry/TtlNtries net: ${reading.problem}`, position);
    const magnitude = reading.minor;
    net = magnitude === 0 ? 0 : signOf(entries.netDirection, 'TxsSummry/TtlNtries net CdtDbtInd', position) * magnitude;
  }
  return {
    entries: entries === undefined ? null : { count: count(entries.count, 'TtlNtries'), sum: sum(entries.sum, 'TtlNtries'), net },
    credits: summary.credits === undefined ? null : { count: count(summary.credits.count, 'TtlCdtNtries'), sum: sum(summary.credits.sum, 'TtlCdtNtries') },
    debits: summary.debits === undefined ? null : { count: count(summary.debits.count, 'TtlDbtNtries'), sum: sum(summary.debits.sum, 'TtlDbtNtries') },
  };
}

/**
 * A batch booking's parts, one per TxDtls, when each has its own amount in the entry's currency and
 * their signed total is the entry's: null when some have none or another currency (the TxDtls then
 * describe the entry, they do not split it); a problem when they are there but cannot be the parts.
 */
function batchParts(
  transactions: readonly TransactionDetails[],
  entry: { amount: number; direction: 'credit' | 'debit'; currency: string; text: string },
): Array<{ amount: number; direction: 'credit' | 'debit' }> | { problem: string } | null {
  const amounts = transactions.map((details) => details.amount ?? details.transactionAmount);
  if (amounts.some((amount) => amount === undefined || (amount.currency !== undefined && amount.currency !== entry.currency))) return null;
  let total = 0n;
  const parts: Array<{ amount: number; direction: 'credit' | 'debit' }> = [];
  for (const [index, details] of transactions.entries()) {
    const reading = readStatementAmount(amounts[index]!.text, entry.currency);
    if (reading.problem !== undefined) return { problem: `TxDtls ${index + 1} of the batch-booked entry: ${reading.problem}` };
    const direction = details.direction === undefined ? entry.direction : directionOf(details.direction);
    if (direction === null) return { problem: `TxDtls ${index + 1} of the batch-booked entry: CdtDbtInd "${details.direction}" is neither CRDT nor DBIT` };
    total += BigInt(direction === 'credit' ? reading.minor : -reading.minor);
    parts.push({ amount: reading.minor, direction });
  }
  const signed = BigInt(entry.direction === 'credit' ? entry.amount : -entry.amount);
  if (total !== signed) {
    return {
      problem: `the TxDtls amounts of the batch-booked entry add up to ${formatMoney(total, entry.currency)}, not its Amt ${formatMoney(signed < 0n ? -signed : signed, entry.currency)}`,
    };
  }
  return parts;
}

type EntryFigures = Pick<
  StatementEntry,
  'position' | 'index' | 'bankReference' | 'accountServicerReference' | 'batch' | 'direction' | 'amount' | 'currency' | 'bookingDate' | 'valueDate' | 'problem'
>;

/**
 * The entry, with what the payer and the bank wrote about it, from its TxDtls (all of them for an entry
 * kept whole, one for a batch's part): every Strd/CdtrRefInf/Ref, every Ustrd, AddtlTxInf, per TxDtls
 * in order, then the entry's AddtlNtryInf, joined by ' | '; the references of their Refs; the debtor
 * when they agree on one; the first return reason; the entry's bank transaction code, else theirs.
 * Built as one literal, every entry of the same shape: this runs once per entry of a large file.
 */
function entryOf(entry: EntryInProgress, transactions: readonly TransactionDetails[], figures: EntryFigures): StatementEntry {
  let remittance = '';
  const references: string[] = [];
  let debtorName: string | null | undefined;
  let debtorAccount: string | null | undefined;
  let returnReason: string | null = null;
  let transactionCode: CodeInProgress | undefined;
  const add = (text: string) => {
    remittance = remittance === '' ? text : `${remittance} | ${text}`;
  };
  for (const details of transactions) {
    for (const text of details.structured) add(text);
    for (const text of details.unstructured) add(text);
    if (details.additionalInformation !== undefined) add(details.additionalInformation);
    for (const reference of details.references) if (!references.includes(reference)) references.push(reference);
    debtorName = agreed(debtorName, details.debtorName);
    debtorAccount = agreed(debtorAccount, details.debtorAccount);
    if (returnReason === null && details.returnReason !== undefined) returnReason = details.returnReason;
    transactionCode ??= details.bankTransactionCode;
  }
  if (entry.additionalInformation !== undefined) add(entry.additionalInformation);
  const code = entry.bankTransactionCode ?? transactionCode;
  return {
    position: figures.position,
    index: figures.index,
    bankReference: figures.bankReference,
    accountServicerReference: figures.accountServicerReference,
    entryReference: entry.entryReference || null,
    transactionReferences: references,
    batch: figures.batch,
    direction: figures.direction,
    reversal: entry.reversal,
    bankTransactionCode: code === undefined ? null : { domain: code.domain, family: code.family, subFamily: code.subFamily, proprietary: code.proprietary },
    returnReason,
    amount: figures.amount,
    currency: figures.currency,
    bookingDate: figures.bookingDate,
    valueDate: figures.valueDate,
    remittanceInformation: remittance === '' ? null : remittance,
    debtorName: debtorName || null,
    debtorAccount: debtorAccount || null,
    problem: figures.problem,
  };
}

/** The value every TxDtls that gives one agrees on; null once two differ. */
function agreed(sofar: string | null | undefined, next: string | undefined): string | null | undefined {
  if (next === undefined || next === '') return sofar;
  if (sofar === undefined) return next;
  return sofar === next ? sofar : null;
}
