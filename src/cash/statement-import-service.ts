import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { describeActor, recordAction, type Actor } from '../audit/audit-service.ts';
import type { Database, Executor } from '../db/connection.ts';
import { ConflictError } from '../shared/domain-errors.ts';
import { timeOrderedUuid } from '../shared/time-ordered-uuid.ts';
import { StatementRejected, type ParsedStatement } from './bank-statement.ts';
import { matchOpenCredits, type MatchingOutcome, type MatchingPolicy } from './matching-service.ts';
import { lockCash } from './remittance-repository.ts';
import { parseStatement } from './statement-parser.ts';
import { findCollectionAccountByDetails, findKnownBankReferences, findStatementByBankId, insertStatement } from './statement-repository.ts';

export interface StatementImportOutcome {
  statement: Awaited<ReturnType<typeof insertStatement>>;
  /** The same file was imported before: nothing changed. */
  replayed: boolean;
  newCredits: number;
  matching: MatchingOutcome | null;
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
  parsed: ParsedStatement;
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
 * Stores a statement read whole and checked, then runs the matching rules, in the caller's
 * transaction under the cash lock. The same file again is a no-op; another file with the same
 * statement id is refused; a statement of an account that is not ours, or in another currency than
 * the account, is refused whole.
 */
export async function recordStatement(trx: Executor, input: ReadStatement & { actor: Actor; policy: MatchingPolicy }): Promise<StatementImportOutcome> {
  const { parsed, digest } = input;
  const account = await findCollectionAccountByDetails(trx, parsed.account.sortCode, parsed.account.accountNumber);
  if (!account) {
    throw new StatementRejected(`the statement is of account ${parsed.account.sortCode} ${parsed.account.accountNumber}, which is not one of our collection accounts`);
  }
  if (account.currency !== parsed.currency) {
    throw new StatementRejected(`the statement is in ${parsed.currency}; collection account ${parsed.account.sortCode} ${parsed.account.accountNumber} holds ${account.currency}`);
  }
  const credits = parsed.entries.filter((entry) => entry.direction === 'credit');
  await lockCash(trx, 'exclusive');
  const existing = await findStatementByBankId(trx, account.id, parsed.format, parsed.statementId);
  if (existing) {
    if (Buffer.compare(existing.content_sha256, digest) === 0) return { statement: existing, replayed: true, newCredits: 0, matching: null };
    throw new ConflictError('statement-conflict', `statement ${parsed.statementId} (${parsed.format}) was imported on ${existing.imported_at.toISOString()} with other content`, {
      members: { bank_statement_id: existing.id },
    });
  }
  // The statement's file is checked to hold no entry twice; the account may hold some of them already.
  const known = await findKnownBankReferences(trx, account.id, credits.map((credit) => credit.bankReference));
  const fresh = credits.filter((credit) => !known.has(credit.bankReference)).map((credit) => ({ ...credit, id: timeOrderedUuid() }));
  const newCredits = fresh.length;
  const statement = await insertStatement(trx, {
    id: randomUUID(),
    collectionAccountId: account.id,
    format: parsed.format,
    statementId: parsed.statementId,
    contentSha256: digest,
    fileName: input.fileName,
    currency: parsed.currency,
    credits: credits.length,
    creditsTotal: credits.reduce((sum, credit) => sum + credit.amount, 0),
    creditsAlreadyImported: credits.length - newCredits,
    debitsIgnored: parsed.entries.length - credits.length,
    importedBy: describeActor(input.actor),
  });
  const matching = await matchOpenCredits(trx, input.policy, { statement: { id: statement.id, collectionAccountId: account.id }, credits: fresh });
  await recordAction(trx, {
    actor: input.actor,
    action: 'bank_statement.imported',
    resourceType: 'bank_statement',
    resourceId: statement.id,
    reason: null,
    after: { format: parsed.format, statement_id: parsed.statementId, credits: credits.length, new_credits: newCredits, matches: matching.matches },
  });
  return { statement, replayed: false, newCredits, matching };
}

/** The CLI's and the demo's import: read, then record in a transaction of its own. */
export async function importStatement(
  db: Database,
  input: { source: AsyncIterable<Buffer | string> | Readable; fileName: string | null; actor: Actor; maxBytes: number; policy: MatchingPolicy },
): Promise<StatementImportOutcome> {
  const read = await readStatement(input.source, { maxBytes: input.maxBytes, fileName: input.fileName });
  return db.transaction().execute((trx) => recordStatement(trx, { ...read, actor: input.actor, policy: input.policy }));
}
