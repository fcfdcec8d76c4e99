import { formatMoney } from '../../platform/money/money-text.ts';
import type { StatementEntry } from './bank-statement.ts';
import { normaliseReference } from './remittance-matching.ts';

// What a bank credit is, across the files that report it. The same money reaches us in several
// files: a camt.054 notifies it during the day (advance notice, sometimes detailing a batch entry by
// entry), the camt.053 books it at the end of the day (the booked truth, sometimes as one lump sum),
// and a statement may be sent again under another id. Banks number NtryRef afresh in each file, some
// give their reference as NtryRef in one file and as AcctSvcrRef in the other, and some reuse an
// AcctSvcrRef within a file. So a credit is identified by:
//
//   the account (the caller looks only at the account's credits), the booking date, the amount, and a
//   bank reference both files give: a distinctive reference (6 characters or more) in either field, or
//   a transaction reference (EndToEndId, TxId...). A short reference ("1", "0042") is a counter, not an
//   identity: it names the same credit only with the same amount and no contradicting payer's text.
//
// A batch is one credit in one file and several in the other: a lump sum is the batch whose parts add
// up to it. A distinctive reference shared on the same day with another amount is a conflict for a
// person, never a silent keep or drop.

/** Entries and credits whose references are shorter than this are told apart by amount and text too. */
export const DISTINCTIVE_REFERENCE_MIN_LENGTH = 6;

/**
 * ISO 20022 bank transaction sub-family codes that mean "this entry returns or reverses an earlier
 * payment" (External Code Sets, BankTransactionSubFamily): returns and reversals of credit transfers,
 * ACH returns and reversals, reversals after a cancellation request, unpaid and reversed direct debits.
 */
export const RETURN_SUB_FAMILIES: ReadonlySet<string> = new Set(['RRTN', 'RPCR', 'ARET', 'AREV', 'RRCT', 'PRDD', 'UPDD', 'PRCT']);

/**
 * - credit: money an employer (or anyone) paid in: the matching rules may place it;
 * - credit_reversal: a debit that takes back an earlier credit (RvslInd, or a return): un-funds it;
 * - debit_return: a credit that brings back a debit of ours (a payout returned): never a remittance;
 * - debit: money going out (our payouts, fees): not the cash matching's business;
 * - unusable: the parser found a problem with the entry: for a person.
 */
export type EntryKind = 'credit' | 'credit_reversal' | 'debit_return' | 'debit' | 'unusable';

export function entryKind(entry: Pick<StatementEntry, 'direction' | 'reversal' | 'returnReason' | 'bankTransactionCode' | 'problem'>): EntryKind {
  if (entry.problem !== null) return 'unusable';
  const subFamily = entry.bankTransactionCode?.subFamily ?? null;
  const returned = entry.reversal || entry.returnReason !== null || (subFamily !== null && RETURN_SUB_FAMILIES.has(subFamily));
  if (entry.direction === 'credit') return returned ? 'debit_return' : 'credit';
  return returned ? 'credit_reversal' : 'debit';
}

/** A credit already on the account, as much of it as identity needs. */
export interface KnownCredit {
  id: string;
  amount: number;
  bookingDate: string;
  accountServicerReference: string | null;
  entryReference: string | null;
  transactionReferences: readonly string[];
  remittanceInformation: string | null;
  batch: { amount: number; part: number; parts: number } | null;
  /** Only a camt.054 has reported it: a booked statement supersedes the notice. */
  notifiedOnly: boolean;
  reversed: boolean;
}

export type IncomingCredit = Pick<
  StatementEntry,
  'amount' | 'currency' | 'bookingDate' | 'accountServicerReference' | 'entryReference' | 'transactionReferences' | 'remittanceInformation' | 'batch'
>;

/** How strongly two records share a reference: strong names one credit whatever the amount, weak only with it. */
type Link = { strength: 'strong' | 'weak'; by: string };

const isDistinctive = (reference: string | null): reference is string => reference !== null && reference.trim().length >= DISTINCTIVE_REFERENCE_MIN_LENGTH;

function sharedReference(entry: IncomingCredit, credit: KnownCredit): Link | null {
  const entryRefs = [entry.accountServicerReference, entry.entryReference];
  const creditRefs = [credit.accountServicerReference, credit.entryReference];
  if (isDistinctive(entry.accountServicerReference) && entry.accountServicerReference === credit.accountServicerReference) {
    return { strength: 'strong', by: `account servicer reference ${entry.accountServicerReference}` };
  }
  for (const reference of entryRefs) {
    if (isDistinctive(reference) && creditRefs.includes(reference)) return { strength: 'strong', by: `bank reference ${reference}` };
  }
  const transaction = entry.transactionReferences.find((reference) => isDistinctive(reference) && credit.transactionReferences.includes(reference));
  if (transaction !== undefined) return { strength: 'strong', by: `transaction reference ${transaction}` };
  for (const reference of entryRefs) {
    if (reference !== null && reference.trim() !== '' && creditRefs.includes(reference)) return { strength: 'weak', by: `entry reference ${reference}` };
  }
  return null;
}

/** Whether the payer's texts could be of one payment: either is absent, or they say the same in letters and digits. */
function compatibleText(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return true;
  return normaliseReference(a) === normaliseReference(b);
}

/**
 * The known credits by booking date and reference, so each entry is compared only with the credits it
 * could be (every relation above needs a shared reference on the same day): a camt.053 booking the
 * day's 10,000 notified credits makes 10,000 lookups, not 100 million comparisons.
 */
export class KnownCreditIndex {
  readonly #byReference = new Map<string, KnownCredit[]>();
  /** Each credit's place in the order it was added: candidates come back in it, so answers do not depend on which reference found them. */
  readonly #order = new Map<KnownCredit, number>();

  constructor(known: readonly KnownCredit[] = []) {
    for (const credit of known) this.add(credit);
  }

  add(credit: KnownCredit): void {
    this.#order.set(credit, this.#order.size);
    for (const reference of new Set(referencesOf(credit))) {
      const key = `${credit.bookingDate}\u0000${reference}`;
      const credits = this.#byReference.get(key);
      if (credits) credits.push(credit);
      else this.#byReference.set(key, [credit]);
    }
  }

  /** The credits of the entry's booking date sharing any reference with it, each once, in the order they were added. */
  candidatesFor(entry: IncomingCredit): KnownCredit[] {
    const found = new Set<KnownCredit>();
    for (const reference of referencesOf(entry)) {
      for (const credit of this.#byReference.get(`${entry.bookingDate}\u0000${reference}`) ?? []) found.add(credit);
    }
    return [...found].sort((a, b) => this.#order.get(a)! - this.#order.get(b)!);
  }
}

function referencesOf(record: { accountServicerReference: string | null; entryReference: string | null; transactionReferences: readonly string[] }): string[] {
  return [record.accountServicerReference, record.entryReference, ...record.transactionReferences].filter(
    (reference): reference is string => reference !== null && reference.trim() !== '',
  );
}

export type CreditVerdict =
  | { outcome: 'new' }
  /** The entry is a credit (or a batch of credits) already on the account; superseded: a booked statement confirms a notice. */
  | { outcome: 'already_known' | 'superseded'; creditIds: string[]; detail: string }
  | { outcome: 'conflicting'; creditIds: string[]; detail: string };

/**
 * What a statement's credit entry is, given the credits the account already holds on its booking date
 * and the ones other entries of the same import already claimed (each known credit is one entry,
 * except a lump sum, which all the parts of one batch claim together: `claimedBy` maps a credit to
 * the batch key that claimed it). `booked`: the entry comes from a camt.053 or CSV statement.
 */
export function creditVerdict(entry: IncomingCredit, booked: boolean, known: readonly KnownCredit[], claimedBy: ReadonlyMap<string, string>, batchKey: string): CreditVerdict {
  const sameDay = known.filter((credit) => credit.bookingDate === entry.bookingDate);
  const money = (minor: number) => formatMoney(minor, entry.currency);
  const free = (credit: KnownCredit) => !claimedBy.has(credit.id) || (entry.batch !== null && claimedBy.get(credit.id) === batchKey && credit.batch === null);
  const verdictOf = (credits: KnownCredit[], by: string): CreditVerdict => {
    const supersedes = booked && credits.some((credit) => credit.notifiedOnly);
    return { outcome: supersedes ? 'superseded' : 'already_known', creditIds: credits.map((credit) => credit.id), detail: by };
  };

  // The same credit: same amount, same shape (a whole credit, or the same part of a batch of as many
  // parts); a distinctive reference before a counter one.
  for (const strength of ['strong', 'weak'] as const) {
    for (const credit of sameDay) {
      if (!free(credit) || credit.amount !== entry.amount) continue;
      const sameShape =
        entry.batch === null ? credit.batch === null : credit.batch !== null && credit.batch.part === entry.batch.part && credit.batch.parts === entry.batch.parts;
      if (!sameShape) continue;
      const link = sharedReference(entry, credit);
      if (link?.strength !== strength) continue;
      if (strength === 'weak' && !compatibleText(entry.remittanceInformation, credit.remittanceInformation)) continue;
      return verdictOf([credit], `known by its ${link.by}`);
    }
  }

  // A lump sum the other file detailed as a batch: all the batch's parts, adding up to it.
  if (entry.batch === null) {
    const parts = sameDay.filter(
      (credit) => free(credit) && credit.batch !== null && credit.batch.amount === entry.amount && sharedReference(entry, credit)?.strength === 'strong',
    );
    if (parts.length > 0) {
      const expected = parts[0]!.batch!.parts;
      const sum = parts.reduce((total, credit) => total + credit.amount, 0);
      if (parts.length === expected && sum === entry.amount) return verdictOf(parts, `known as the ${expected} entries of a batch booked as one`);
      return {
        outcome: 'conflicting',
        creditIds: parts.map((credit) => credit.id),
        detail: `${parts.length} known entries of a batch of ${expected} add up to ${money(sum)}, not ${money(entry.amount)}`,
      };
    }
  } else {
    // One part of a batch the other file booked as one lump sum.
    const lump = sameDay.find(
      (credit) => free(credit) && credit.batch === null && credit.amount === entry.batch!.amount && sharedReference(entry, credit)?.strength === 'strong',
    );
    if (lump !== undefined) return verdictOf([lump], `known as part ${entry.batch.part} of ${entry.batch.parts} of a lump sum booked as one credit`);
  }

  // A distinctive reference the account knows on the same day with another amount: never guessed at.
  for (const credit of sameDay) {
    const link = sharedReference(entry, credit);
    if (link?.strength === 'strong' && credit.amount !== entry.amount) {
      return {
        outcome: 'conflicting',
        creditIds: [credit.id],
        detail: `its ${link.by} is already on the account with amount ${money(credit.amount)}, not ${money(entry.amount)}`,
      };
    }
  }
  return { outcome: 'new' };
}

/** A reversal a statement already recorded: placed on its credit, or waiting for a person. */
export interface RecordedReversal {
  id: string;
  /** The credit it took back; null while it waits for a person. */
  creditId: string | null;
  format: 'camt.053' | 'camt.054' | 'csv';
  bookingDate: string;
  amount: number;
  accountServicerReference: string | null;
  entryReference: string | null;
}

/**
 * The reversal already recorded that this entry is again (a camt.054 notified it and the camt.053
 * books it, or a statement is sent again under another id), if any: same day and amount, and a
 * distinctive reference both give; without any distinctive reference, one recorded from the other
 * kind of file (a notice against a booked statement). Taking a credit back twice would un-fund
 * another credit of the same amount.
 */
export function sameReversal(
  entry: Pick<IncomingCredit, 'amount' | 'bookingDate' | 'accountServicerReference' | 'entryReference'>,
  format: RecordedReversal['format'],
  recorded: readonly RecordedReversal[],
): RecordedReversal | undefined {
  const candidates = recorded.filter((earlier) => earlier.bookingDate === entry.bookingDate && earlier.amount === entry.amount);
  const entryRefs = [entry.accountServicerReference, entry.entryReference].filter(isDistinctive);
  const byReference = candidates.find((earlier) =>
    [earlier.accountServicerReference, earlier.entryReference].some((reference) => isDistinctive(reference) && entryRefs.includes(reference)),
  );
  if (byReference !== undefined || entryRefs.length > 0) return byReference;
  const notice = format === 'camt.054';
  return candidates.find((earlier) => (earlier.format === 'camt.054') !== notice && ![earlier.accountServicerReference, earlier.entryReference].some(isDistinctive));
}

export type ReversalVerdict = { creditId: string; detail: string } | { creditId: null; detail: string };

/**
 * Which credit a reversal (or return) takes back. Only a credit of the same amount, booked on or before
 * the reversal and not already reversed, can be it (`candidates` are those of the account). In order:
 * the one credit sharing a distinctive or transaction reference with the reversal; else the one with
 * the same payer's text; else the only credit of that amount. Anything less certain is left to a
 * person: taking back the wrong credit would un-fund another employer's pay date.
 */
export function reversedCredit(reversal: IncomingCredit, candidates: readonly KnownCredit[]): ReversalVerdict {
  const possible = candidates.filter((credit) => !credit.reversed && credit.amount === reversal.amount && credit.bookingDate <= reversal.bookingDate);
  // A reversal quotes the credit's references wherever its file puts them (its own AcctSvcrRef, a TxDtls reference...).
  const distinctive = referencesOf(reversal).filter(isDistinctive);
  const shared = (credit: KnownCredit) => referencesOf(credit).find((reference) => distinctive.includes(reference));
  const byReference = possible.filter((credit) => shared(credit) !== undefined);
  if (byReference.length === 1) return { creditId: byReference[0]!.id, detail: `reverses the credit with its reference ${shared(byReference[0]!)!}` };
  if (byReference.length > 1) return { creditId: null, detail: `${byReference.length} credits of this amount share its references` };
  const text = reversal.remittanceInformation === null ? '' : normaliseReference(reversal.remittanceInformation);
  if (text !== '') {
    const byText = possible.filter((credit) => credit.remittanceInformation !== null && normaliseReference(credit.remittanceInformation) === text);
    if (byText.length === 1) return { creditId: byText[0]!.id, detail: 'reverses the credit with the same payer reference and amount' };
  }
  if (possible.length === 1) return { creditId: possible[0]!.id, detail: 'reverses the only credit of this amount on or before its booking date' };
  if (possible.length === 0) return { creditId: null, detail: 'no credit of this amount on or before its booking date is left to reverse' };
  return { creditId: null, detail: `${possible.length} credits of this amount could be the one reversed` };
}
