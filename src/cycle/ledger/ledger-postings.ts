import type { LedgerEntryKind } from '../../platform/db/tables.ts';

// The ledger never edits a posting. Each collection attempt carries a revision counter; when what an
// attempt collected changes (a later push version, a re-run, a missing confirmation that finally
// arrives), the next revision reverses everything the attempt had posted and posts the new figure.
// So the sum of an attempt's entries is always its current collected amount, and the unique key
// (attempt, revision, kind) makes a second posting of the same revision impossible.

export interface PostedAttempt {
  /** Net minor units the attempt's ledger entries add up to. */
  readonly collected: number;
  readonly revision: number;
}

export interface LedgerPosting {
  kind: LedgerEntryKind;
  /** Signed minor units: collections positive, reversals negative. */
  amount: number;
}

export interface AttemptPostings {
  /** The revision the attempt stands at afterwards; the postings (if any) carry it. */
  revision: number;
  postings: LedgerPosting[];
}

/** What to post when an attempt (new when `previous` is null) now stands at `collected`. */
export function postingsForAttempt(previous: PostedAttempt | null, collected: number): AttemptPostings {
  if (!Number.isSafeInteger(collected) || collected < 0) {
    throw new RangeError(`collected must be a non-negative integer of minor units, got ${String(collected)}`);
  }
  if (previous === null) {
    return { revision: 0, postings: collected > 0 ? [{ kind: 'payment_collected', amount: collected }] : [] };
  }
  if (previous.collected === collected) return { revision: previous.revision, postings: [] };
  const postings: LedgerPosting[] = [];
  // Zero entries are skipped: the table forbids them, and they would carry no information.
  if (previous.collected > 0) postings.push({ kind: 'collection_reversed', amount: -previous.collected });
  if (collected > 0) postings.push({ kind: 'payment_collected', amount: collected });
  return { revision: previous.revision + 1, postings };
}
