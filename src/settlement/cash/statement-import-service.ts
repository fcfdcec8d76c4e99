import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Selectable } from 'kysely';
import { describeActor, recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import type { BankStatementsTable, StatementEntryOutcome } from '../../platform/db/tables.ts';
import { ConflictError } from '../../platform/shared/domain-errors.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import { StatementRejected, type ParsedStatement, type ParsedStatementFile, type StatementEntry } from './bank-statement.ts';
import { creditVerdict, entryKind, KnownCreditIndex, sameReversal, type KnownCredit, type RecordedReversal } from './credit-identity.ts';
import { matchOpenCredits, type MatchingOutcome, type MatchingPolicy } from './matching-service.ts';
import { advisoryLockCash } from './remittance-repository.ts';
import { applyReversals, type ReversalOutcome } from './reversal-service.ts';
import { creditsTotalOrProblem, statementIntegrityFindings, sequenceGap } from './statement-integrity.ts';
import { parseStatement } from './statement-parser.ts';
import {
  completeStatement,
  findCollectionAccountByDetails,
  findPreviousSequenceNumber,
  findStatementByBankId,
  insertStatement,
  insertStatementEntries,
  listCreditsBookedOn,
  listEntriesOfStatements,
  listRecordedReversals,
  listStatementPages,
  markCreditsBooked,
  sequenceNumberTaken,
  type NewCredit,
  type NewStatementEntry,
} from './statement-repository.ts';

/** What the import made of one entry of a statement. */
export interface EntryOutcome {
  index: number;
  bankReference: string;
  direction: 'credit' | 'debit';
  amount: number;
  outcome: StatementEntryOutcome;
  /** The credit the entry is (new or known), or the credit a reversal took back. */
  creditId: string | null;
  detail: string | null;
}

export interface StatementRecordOutcome {
  statement: Selectable<BankStatementsTable>;
  /** The same statement was imported before (from this file or another): nothing changed. */
  replayed: boolean;
  newCredits: number;
  entries: EntryOutcome[];
}

export interface StatementImportOutcome {
  /** The file's first statement (most files hold one). */
  statement: Selectable<BankStatementsTable>;
  statements: StatementRecordOutcome[];
  /** Every statement of the file was imported before: nothing changed. */
  replayed: boolean;
  newCredits: number;
  matching: MatchingOutcome | null;
  reversals: ReversalOutcome;
}

/** Hashes what passes through, so the file's digest comes from the same single read the parser makes. */
async function* hashing(source: AsyncIterable<Buffer | string>, hash: ReturnType<typeof createHash>): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    hash.update(bytes);
    yield bytes;
  }
}

export interface ReadStatement {
  parsed: ParsedStatementFile;
  /** SHA-256 of the file's bytes. */
  digest: Buffer;
  fileName: string | null;
}

/** Reads and checks a whole statement file, streamed, hashing it on the way: nothing is stored yet. */
export async function readStatement(source: AsyncIterable<Buffer | string> | Readable, options: { maxBytes: number; fileName: string | null }): Promise<ReadStatement> {
  const hash = createHash('sha256');
  const parsed = await parseStatement(hashing(source as AsyncIterable<Buffer | string>, hash), {
    maxBytes: options.maxBytes,
    ...(options.fileName ? { fileName: options.fileName } : {}),
  });
  return { parsed, digest: hash.digest(), fileName: options.fileName };
}

/**
 * The digest of a statement's content as read, without where in the file it stood: the same statement
 * sent again in another file (alone, or beside others) is recognised as the same.
 */
export function parsedStatementDigest(statement: ParsedStatement): Buffer {
  const content = JSON.stringify(statement, (key, value: unknown) => (key === 'position' ? undefined : value));
  return createHash('sha256').update(content).digest();
}

/** A new credit as the index of known credits holds it. */
function knownCreditOfEntry(entry: StatementEntry, id: string, notifiedOnly: boolean): KnownCredit {
  const { amount, bookingDate, accountServicerReference, entryReference, transactionReferences, remittanceInformation, batch } = entry;
  return { id, amount, bookingDate, accountServicerReference, entryReference, transactionReferences, remittanceInformation, batch, notifiedOnly, reversed: false };
}

const countOutcomes = (entries: readonly EntryOutcome[]) => {
  const counts: Record<string, number> = {};
  for (const entry of entries) counts[entry.outcome] = (counts[entry.outcome] ?? 0) + 1;
  return counts;
};

interface StatementInProgress {
  /** Its place in the file. */
  position: number;
  statement: Selectable<BankStatementsTable>;
  parsed: ParsedStatement;
  collectionAccountId: string;
  entries: EntryOutcome[];
  newCredits: number;
  findings: Array<{ code: string; detail: string }>;
}

/**
 * Stores a statement file read whole and checked, then runs the matching rules and applies the
 * reversals it carries, in the caller's transaction under the cash advisory lock. Each statement (and page)
 * of the file is recorded on its own: the same statement again is a no-op, another with the same id
 * and page is refused (409). A statement of an account that is not ours, or in another currency than
 * the account, refuses the whole file; an entry that cannot be used is kept with its reason for a person.
 * Each credit entry is told apart from the credits the account already has (credit-identity.ts).
 */
export async function recordStatement(trx: Executor, input: ReadStatement & { actor: Actor; policy: MatchingPolicy }): Promise<StatementImportOutcome> {
  const accounts = [];
  for (const parsed of input.parsed.statements) {
    const account = await findCollectionAccountByDetails(trx, parsed.account.sortCode, parsed.account.accountNumber);
    if (!account) {
      throw new StatementRejected(`the statement is of account ${parsed.account.sortCode} ${parsed.account.accountNumber}, which is not one of our collection accounts`);
    }
    if (parsed.currency !== null && account.currency !== parsed.currency) {
      throw new StatementRejected(
        `the statement is in ${parsed.currency}; collection account ${parsed.account.sortCode} ${parsed.account.accountNumber} holds ${account.currency}`,
      );
    }
    const { problem } = creditsTotalOrProblem(
      parsed.entries.filter((entry) => entryKind(entry) === 'credit').map((entry) => entry.amount),
      account.currency,
    );
    if (problem !== null) throw new StatementRejected(`statement ${parsed.statementId}: ${problem}`);
    accounts.push(account);
  }
  await advisoryLockCash(trx, 'exclusive');

  // In the file's order, whether replayed or recorded.
  const outcomes: StatementRecordOutcome[] = new Array(input.parsed.statements.length);
  // What each account already holds, stored or stored by this import: one index per account for the whole file.
  const indexes = new Map<string, KnownCreditIndex>();
  const knownOf = (accountId: string) => indexes.get(accountId) ?? indexes.set(accountId, new KnownCreditIndex()).get(accountId)!;
  const seenIds = new Set<string>();
  const reversalsOfThisFile: RecordedReversal[] = [];
  const recorded: StatementInProgress[] = [];
  const incoming: NewCredit[] = [];
  const reversals: Array<{ entry: StatementEntry; statement: StatementInProgress; outcome: EntryOutcome; collectionAccountId: string }> = [];
  for (const [position, parsed] of input.parsed.statements.entries()) {
    const account = accounts[position]!;
    const parsedDigest = parsedStatementDigest(parsed);
    const existing = await findStatementByBankId(trx, account.id, parsed.format, parsed.statementId, parsed.page.number);
    if (existing) {
      const same = existing.parsed_sha256 === null ? Buffer.compare(existing.content_sha256, input.digest) === 0 : Buffer.compare(existing.parsed_sha256, parsedDigest) === 0;
      if (same) {
        outcomes[position] = { statement: existing, replayed: true, newCredits: 0, entries: [] };
        continue;
      }
      throw new ConflictError(
        'statement-conflict',
        `statement ${parsed.statementId}${parsed.page.number > 1 ? ` page ${parsed.page.number}` : ''} (${parsed.format}) was imported on ${existing.imported_at.toISOString()} with other content`,
        { members: { bank_statement_id: existing.id } },
      );
    }
    const currency = parsed.currency ?? account.currency;
    const usable = parsed.entries.map((entry) =>
      entry.problem === null && entry.currency !== currency ? { ...entry, problem: `the entry is in ${entry.currency}; the account holds ${currency}` } : entry,
    );
    const credits = usable.filter((entry) => entryKind(entry) === 'credit');
    // Before the statement is stored: its own sequence number must not count as taken.
    const findings = await integrityFindings(trx, account.id, parsed);
    const statement = await insertStatement(trx, {
      id: randomUUID(),
      collectionAccountId: account.id,
      format: parsed.format,
      statementId: parsed.statementId,
      pageNumber: parsed.page.number,
      lastPage: parsed.page.last,
      electronicSequenceNumber: parsed.electronicSequenceNumber,
      legalSequenceNumber: parsed.legalSequenceNumber,
      balances: parsed.balances.map(({ type, amount, currency: balanceCurrency, date }) => ({ type, amount, currency: balanceCurrency, date })),
      contentSha256: input.digest,
      parsedSha256: parsedDigest,
      fileName: input.fileName,
      currency,
      credits: credits.length,
      // Within MAX_EXACT_MINOR_UNITS: every statement's credit entries were checked before anything was stored.
      creditsTotal: credits.reduce((sum, credit) => sum + credit.amount, 0),
      creditsAlreadyImported: 0,
      debitsIgnored: usable.filter((entry) => entryKind(entry) === 'debit').length,
      integrityFindings: [],
      entryOutcomes: {},
      importedBy: describeActor(input.actor),
    });
    const progress: StatementInProgress = { position, statement, parsed, collectionAccountId: account.id, entries: [], newCredits: 0, findings };
    recorded.push(progress);

    const booked = parsed.format !== 'camt.054';
    const known = knownOf(account.id);
    for (const credit of await listCreditsBookedOn(trx, account.id, [...new Set(credits.map((credit) => credit.bookingDate))])) {
      // Another statement of the file may have read the same day: each credit once in the index.
      if (seenIds.has(credit.id)) continue;
      known.add(credit);
      seenIds.add(credit.id);
    }
    const claimedBy = new Map<string, string>();
    const takenBack = usable.filter((entry) => entryKind(entry) === 'credit_reversal');
    const recordedReversals = await listRecordedReversals(
      trx,
      account.id,
      [...new Set(takenBack.map((entry) => entry.bookingDate))],
      [...new Set(takenBack.map((entry) => entry.amount))],
    );
    const confirmed: string[] = [];
    for (const entry of usable) {
      const base = { index: entry.index, bankReference: entry.bankReference, direction: entry.direction, amount: entry.amount };
      const kind = entryKind(entry);
      if (kind === 'unusable') {
        progress.entries.push({ ...base, outcome: 'unusable', creditId: null, detail: entry.problem });
      } else if (kind === 'debit') {
        progress.entries.push({ ...base, outcome: 'debit', creditId: null, detail: null });
      } else if (kind === 'credit_reversal') {
        const repeated = sameReversal(entry, parsed.format, [...recordedReversals, ...reversalsOfThisFile]);
        if (repeated !== undefined) {
          progress.entries.push({
            ...base,
            outcome: 'already_known',
            creditId: repeated.creditId,
            detail: 'a reversal already recorded (a camt.054 notified it, or another statement had it)',
          });
          continue;
        }
        const outcome: EntryOutcome = { ...base, outcome: 'unresolved_reversal', creditId: null, detail: null };
        progress.entries.push(outcome);
        reversals.push({ entry, statement: progress, outcome, collectionAccountId: account.id });
        reversalsOfThisFile.push({
          id: `${statement.id}/${entry.index}`,
          creditId: null,
          format: parsed.format,
          bookingDate: entry.bookingDate,
          amount: entry.amount,
          accountServicerReference: entry.accountServicerReference,
          entryReference: entry.entryReference,
        });
      } else if (kind === 'debit_return') {
        const id = timeOrderedUuid();
        const reason = 'brings back a payment of ours (a reversal or return of a debit): not an employer remittance';
        incoming.push(newCredit(entry, id, progress, booked, 'held', reason));
        progress.entries.push({ ...base, outcome: 'held', creditId: id, detail: reason });
      } else {
        // The parts of one batch stand one after another: the first part's place names the batch.
        const batchKey = `${statement.id}/${entry.batch === null ? entry.index : entry.index - entry.batch.part + 1}`;
        const verdict = creditVerdict(entry, booked, known.candidatesFor(entry), claimedBy, batchKey);
        if (verdict.outcome === 'new') {
          const id = timeOrderedUuid();
          incoming.push(newCredit(entry, id, progress, booked, 'open', null));
          // A later statement of the same file (another Stmt of the account) may report it again.
          known.add(knownCreditOfEntry(entry, id, !booked));
          seenIds.add(id);
          progress.entries.push({ ...base, outcome: 'new', creditId: id, detail: null });
          progress.newCredits += 1;
        } else if (verdict.outcome === 'conflicting') {
          // Kept, but held for a person: counting it would add money twice, dropping it could lose some.
          const id = timeOrderedUuid();
          const reason = `conflicts with a credit already on the account: ${verdict.detail}`;
          incoming.push(newCredit(entry, id, progress, booked, 'held', reason));
          progress.entries.push({ ...base, outcome: 'conflicting', creditId: id, detail: reason });
          for (const creditId of verdict.creditIds) claimedBy.set(creditId, batchKey);
        } else {
          for (const creditId of verdict.creditIds) claimedBy.set(creditId, batchKey);
          if (verdict.outcome === 'superseded') confirmed.push(...verdict.creditIds);
          progress.entries.push({ ...base, outcome: verdict.outcome, creditId: verdict.creditIds[0]!, detail: verdict.detail });
        }
      }
    }
    await markCreditsBooked(trx, confirmed, statement.id);
  }

  const matching = recorded.length > 0 ? await matchOpenCredits(trx, input.policy, incoming) : null;
  const reversalOutcome = await applyReversals(
    trx,
    input.policy,
    reversals.map(({ entry, statement, collectionAccountId }) => ({ entry, statementId: statement.statement.id, collectionAccountId })),
    input.actor,
  );
  for (const [index, reversal] of reversals.entries()) {
    const result = reversalOutcome.results[index]!;
    reversal.outcome.outcome = result.creditId === null ? 'unresolved_reversal' : 'reversal';
    reversal.outcome.creditId = result.creditId;
    reversal.outcome.detail = result.detail;
  }

  for (const progress of recorded) {
    const parsedEntries = new Map(progress.parsed.entries.map((parsed) => [parsed.index, parsed]));
    const entries: NewStatementEntry[] = progress.entries.map((entry) => ({
      id: timeOrderedUuid(),
      statementId: progress.statement.id,
      index: entry.index,
      direction: entry.direction,
      amount: entry.amount,
      currency: progress.statement.currency,
      bookingDate: parsedEntries.get(entry.index)?.bookingDate || null,
      bankReference: entry.bankReference,
      accountServicerReference: parsedEntries.get(entry.index)?.accountServicerReference ?? null,
      entryReference: parsedEntries.get(entry.index)?.entryReference ?? null,
      outcome: entry.outcome,
      creditId: entry.creditId,
      detail: entry.detail,
    }));
    await insertStatementEntries(trx, entries);
    const counts = countOutcomes(progress.entries);
    const statement = await completeStatement(trx, progress.statement.id, {
      creditsAlreadyImported: (counts.already_known ?? 0) + (counts.superseded ?? 0),
      integrityFindings: progress.findings,
      entryOutcomes: counts,
    });
    outcomes[progress.position] = { statement, replayed: false, newCredits: progress.newCredits, entries: progress.entries };
    await recordAction(trx, {
      actor: input.actor,
      action: 'bank_statement.imported',
      resourceType: 'bank_statement',
      resourceId: statement.id,
      reason: null,
      after: {
        format: progress.parsed.format,
        statement_id: progress.parsed.statementId,
        page: progress.parsed.page.number,
        credits: statement.credits,
        new_credits: progress.newCredits,
        entry_outcomes: counts,
        integrity_findings: progress.findings.map((finding) => finding.code),
        matches: matching?.matches ?? 0,
      },
    });
  }
  return {
    statement: outcomes[0]!.statement,
    statements: outcomes,
    replayed: outcomes.every((outcome) => outcome.replayed),
    newCredits: outcomes.reduce((sum, outcome) => sum + outcome.newCredits, 0),
    matching,
    reversals: reversalOutcome,
  };
}

function newCredit(entry: StatementEntry, id: string, statement: StatementInProgress, booked: boolean, state: 'open' | 'held', stateReason: string | null): NewCredit {
  return {
    ...entry,
    id,
    statementId: statement.statement.id,
    collectionAccountId: statement.collectionAccountId,
    bookedStatementId: booked ? statement.statement.id : null,
    state,
    stateReason,
    matchedAmount: 0,
  };
}

/**
 * The statement's own checks (balances, totals), a paginated statement's balances across its pages
 * once they are all in, and whether its sequence number follows the last one seen.
 */
async function integrityFindings(trx: Executor, collectionAccountId: string, parsed: ParsedStatement): Promise<Array<{ code: string; detail: string }>> {
  const findings: Array<{ code: string; detail: string }> = statementIntegrityFindings(parsed).map(({ code, detail }) => ({ code, detail }));
  if (!(parsed.page.number === 1 && parsed.page.last)) findings.push(...(await paginatedStatementFindings(trx, collectionAccountId, parsed)));
  const sequences = [
    { column: 'electronic_sequence_number', name: 'electronic sequence', number: parsed.electronicSequenceNumber },
    { column: 'legal_sequence_number', name: 'legal sequence', number: parsed.legalSequenceNumber },
  ] as const;
  for (const { column, name, number } of sequences) {
    // The pages of a statement share its numbers: the first page speaks for them.
    if (number === null || !/^\d{1,30}$/.test(number) || parsed.page.number !== 1) continue;
    if (await sequenceNumberTaken(trx, collectionAccountId, parsed.format, column, number)) {
      findings.push({ code: 'sequence_repeated', detail: `${name} number ${number} was already used by another ${parsed.format} statement of the account` });
    } else {
      const gap = sequenceGap(await findPreviousSequenceNumber(trx, collectionAccountId, parsed.format, column, number), number, name);
      if (gap !== null) findings.push({ code: 'sequence_gap', detail: gap });
    }
  }
  return findings;
}

/**
 * A page completing its statement (every page from 1 to the last is in once it is recorded): the
 * opening balance of page 1, every page's entries and the last page's closing balance must add up.
 * The last page arriving while others are missing is a finding of its own.
 */
async function paginatedStatementFindings(trx: Executor, collectionAccountId: string, parsed: ParsedStatement): Promise<Array<{ code: string; detail: string }>> {
  const earlier = (await listStatementPages(trx, collectionAccountId, parsed.format, parsed.statementId)).filter((page) => page.page_number !== parsed.page.number);
  const pages = [...earlier.map((page) => ({ number: page.page_number, last: page.last_page })), parsed.page];
  const last = pages.find((page) => page.last);
  if (last === undefined) return [];
  const missing = Array.from({ length: last.number }, (_, index) => index + 1).filter((number) => !pages.some((page) => page.number === number));
  if (missing.length > 0) {
    if (!parsed.page.last) return [];
    return [
      {
        code: 'pages_missing',
        detail: `page${missing.length === 1 ? '' : 's'} ${missing.join(', ')} of the ${last.number} of statement ${parsed.statementId} ${missing.length === 1 ? 'is' : 'are'} missing: its balances cannot be checked yet`,
      },
    ];
  }
  const booked = await listEntriesOfStatements(
    trx,
    earlier.map((page) => page.id),
  );
  const first = parsed.page.number === 1 ? parsed.balances : (earlier.find((page) => page.page_number === 1)?.balances ?? []);
  const closing = parsed.page.last ? parsed.balances : (earlier.find((page) => page.last_page)?.balances ?? []);
  const position = { line: 1 };
  const whole: ParsedStatement = {
    ...parsed,
    page: { number: 1, last: true },
    balances: [
      ...first.filter((balance) => balance.type === 'OPBD' || balance.type === 'PRCD').map((balance) => ({ ...balance, position })),
      ...closing.filter((balance) => balance.type === 'CLBD').map((balance) => ({ ...balance, position })),
    ],
    summary: null,
    entries: [...booked.map((entry, index) => entryOfEarlierPage(entry, index)), ...parsed.entries.map((entry) => ({ ...entry, batch: null }))],
  };
  return statementIntegrityFindings(whole)
    .filter((finding) => finding.code === 'balance_mismatch')
    .map((finding) => ({ code: finding.code, detail: `across its ${last.number} pages: ${finding.detail}` }));
}

/** An earlier page's entry as its balance moves by: only its direction, amount and currency are kept. */
function entryOfEarlierPage(entry: { direction: 'credit' | 'debit'; amount: number; currency: string }, index: number): StatementEntry {
  return {
    ...entry,
    position: { line: 1 },
    index,
    bankReference: `#${index + 1}`,
    accountServicerReference: null,
    entryReference: null,
    transactionReferences: [],
    batch: null,
    reversal: false,
    bankTransactionCode: null,
    returnReason: null,
    bookingDate: '',
    valueDate: null,
    remittanceInformation: null,
    debtorName: null,
    debtorAccount: null,
    problem: null,
  };
}

/** The CLI's and the demo's import: read, then record in a transaction of its own. */
export async function importStatement(
  db: Database,
  input: { source: AsyncIterable<Buffer | string> | Readable; fileName: string | null; actor: Actor; maxBytes: number; policy: MatchingPolicy },
): Promise<StatementImportOutcome> {
  const read = await readStatement(input.source, { maxBytes: input.maxBytes, fileName: input.fileName });
  return db.transaction().execute((trx) => recordStatement(trx, { ...read, actor: input.actor, policy: input.policy }));
}
