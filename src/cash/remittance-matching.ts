import type { MatchRule } from '../db/tables.ts';

// Employers remit a payroll pay date's deductions to the collection account with its payment
// reference (SDR + yymmdd + P + payroll number, src/instructions/payment-reference.ts). Banks pass
// the payer's text on as they please: upper-cased, spaces and punctuation stripped, other words
// around it, or cut short at 18 characters. The rules below tell which credit pays which remittance
// without ever guessing: whatever they cannot place with certainty is left for a person (the
// exceptions queue), because a wrong match pays a biller money that belongs to another payroll.

/** The rules that match without a person; 'manual' is what a person does with the rest. */
export type AutomaticMatchRule = Exclude<MatchRule, 'manual'>;

/** A bank credit, or what is left of one after earlier matches. */
export interface UnmatchedCredit {
  id: string;
  /** The unmatched remainder, minor units of `currency`, > 0. */
  amount: number;
  currency: string;
  /** The payer's reference as the bank delivered it. */
  reference: string | null;
  /** YYYY-MM-DD */
  bookingDate: string;
}

/** A payroll pay date still owed money. */
export interface OpenRemittance {
  payrollId: string;
  payDate: string;
  employerId: string;
  currency: string;
  paymentReference: string;
  /** expected − received, minor units, > 0. */
  outstanding: number;
}

export interface ProposedMatch {
  creditId: string;
  payrollId: string;
  payDate: string;
  amount: number;
  rule: AutomaticMatchRule;
  /** A match a person should look at: the amounts differ (tolerance). */
  flagged: boolean;
}

export interface MatchingOptions {
  /** How far, in minor units, a credit may be from what a remittance is owed and still match (flagged). */
  toleranceMinor: number;
}

/** A bank cuts a long reference short; a cut-off reference still names a remittance with this many characters left. */
export const TRUNCATED_REFERENCE_MIN_LENGTH = 12;

/**
 * The payer's reference reduced to what every bank keeps: upper case letters and digits. Our own
 * payment references are letters and digits only, so this leaves them unchanged.
 */
export function normaliseReference(text: string): string {
  return text.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/** The normalised text and, per character, whether the payer separated it from the one before (a space, a dash...). */
interface NormalisedText {
  text: string;
  separatedBefore: boolean[];
}

function normaliseWithSeparators(raw: string): NormalisedText {
  let text = '';
  const separatedBefore: boolean[] = [];
  let dropped = false;
  for (const character of raw.toUpperCase()) {
    if (/^[A-Z0-9]$/.test(character)) {
      separatedBefore.push(dropped && text.length > 0);
      text += character;
      dropped = false;
    } else {
      dropped = true;
    }
  }
  return { text, separatedBefore };
}

const isDigit = (character: string | undefined): boolean => character !== undefined && character >= '0' && character <= '9';

const remittanceKey = (remittance: { payrollId: string; payDate: string }): string => `${remittance.payrollId}\u0000${remittance.payDate}`;

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Which remittances a credit's reference names, built once per run over all open remittances. */
class ReferenceIndex {
  private readonly byExactReference = new Map<string, OpenRemittance[]>();
  private readonly byNormalisedReference = new Map<string, OpenRemittance[]>();
  /** Every proper prefix, at least TRUNCATED_REFERENCE_MIN_LENGTH long, of a normalised reference. */
  private readonly byTruncatedReference = new Map<string, OpenRemittance[]>();
  private readonly referenceLengths: number[];

  constructor(remittances: readonly OpenRemittance[]) {
    const lengths = new Set<number>();
    for (const remittance of remittances) {
      push(this.byExactReference, remittance.paymentReference, remittance);
      const normalised = normaliseReference(remittance.paymentReference);
      if (normalised === '') continue;
      push(this.byNormalisedReference, normalised, remittance);
      lengths.add(normalised.length);
      for (let length = TRUNCATED_REFERENCE_MIN_LENGTH; length < normalised.length; length++) {
        push(this.byTruncatedReference, normalised.slice(0, length), remittance);
      }
    }
    this.referenceLengths = [...lengths].sort((a, b) => a - b);
  }

  /** The one remittance whose payment reference is exactly the trimmed reference, if exactly one is. */
  exactly(reference: string | null): OpenRemittance | undefined {
    if (reference === null) return undefined;
    const named = this.byExactReference.get(reference.trim()) ?? [];
    return named.length === 1 ? named[0] : undefined;
  }

  /**
   * The remittances whose whole (normalised) reference appears in the credit's. A reference ending
   * in digits only counts where the credit's digits end too, or the payer separated them: otherwise
   * SDR261030P12 would also name SDR261030P1.
   */
  wholeReferencesIn(reference: string | null): OpenRemittance[] {
    if (reference === null) return [];
    const { text, separatedBefore } = normaliseWithSeparators(reference);
    const named = new Map<string, OpenRemittance>();
    for (let start = 0; start < text.length; start++) {
      for (const length of this.referenceLengths) {
        const end = start + length;
        if (end > text.length) break;
        const candidates = this.byNormalisedReference.get(text.slice(start, end));
        if (!candidates) continue;
        const endsAtBoundary = !isDigit(text[end - 1]) || !isDigit(text[end]) || separatedBefore[end] === true;
        if (!endsAtBoundary) continue;
        for (const remittance of candidates) named.set(remittanceKey(remittance), remittance);
      }
    }
    return [...named.values()];
  }

  /** The remittances whose reference the credit's ends with, cut short but still at least TRUNCATED_REFERENCE_MIN_LENGTH long. */
  truncatedReferencesAtEndOf(reference: string | null): OpenRemittance[] {
    if (reference === null) return [];
    const text = normaliseReference(reference);
    const named = new Map<string, OpenRemittance>();
    for (let length = TRUNCATED_REFERENCE_MIN_LENGTH; length <= text.length; length++) {
      for (const remittance of this.byTruncatedReference.get(text.slice(text.length - length)) ?? []) {
        named.set(remittanceKey(remittance), remittance);
      }
    }
    return [...named.values()];
  }

  /**
   * The one remittance a credit's reference identifies, or undefined when it names none or several.
   * A whole reference outranks a cut-off one: when the text holds SDR261030P12 whole, that is the
   * remittance meant, even though it is also how SDR261030P123 would look cut short.
   */
  identified(reference: string | null): OpenRemittance | undefined {
    const whole = this.wholeReferencesIn(reference);
    const named = whole.length > 0 ? whole : this.truncatedReferencesAtEndOf(reference);
    return named.length === 1 ? named[0] : undefined;
  }
}

function push<V>(map: Map<string, V[]>, key: string, value: V): void {
  const values = map.get(key);
  if (values) values.push(value);
  else map.set(key, [value]);
}

function assertPositiveMinorUnits(amount: number, what: string): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new RangeError(`${what} must be a positive integer of minor units, got ${String(amount)}`);
}

function assertInputs(credits: readonly UnmatchedCredit[], remittances: readonly OpenRemittance[], toleranceMinor: number): void {
  // Matching is order-independent only because credits and remittances sort on unique keys; a
  // duplicate would make the outcome depend on which copy came first.
  const creditIds = new Set<string>();
  for (const credit of credits) {
    if (creditIds.has(credit.id)) throw new RangeError(`credit ${credit.id} is given twice`);
    creditIds.add(credit.id);
    assertPositiveMinorUnits(credit.amount, `credit ${credit.id}'s amount`);
  }
  const remittanceKeys = new Set<string>();
  for (const remittance of remittances) {
    const key = remittanceKey(remittance);
    if (remittanceKeys.has(key)) throw new RangeError(`remittance ${remittance.payrollId} ${remittance.payDate} is given twice`);
    remittanceKeys.add(key);
    assertPositiveMinorUnits(remittance.outstanding, `remittance ${remittance.payrollId} ${remittance.payDate}'s outstanding amount`);
  }
  if (!Number.isSafeInteger(toleranceMinor) || toleranceMinor < 0) {
    throw new RangeError(`the tolerance must be a non-negative integer of minor units, got ${String(toleranceMinor)}`);
  }
}

/**
 * Proposes which open remittances the unmatched credits pay. Rules, in this order; a credit or
 * remittance an earlier rule used is not offered to a later one, and a credit only ever pays a
 * remittance of its own currency:
 *
 *  1. exact: the trimmed reference is the payment reference and the amount is what is outstanding.
 *  2. normalised: the reference, in letters and digits, identifies one remittance (is its reference,
 *     holds it whole, or ends with it cut short to 12+ characters) and the amount is what is outstanding.
 *  3. many_to_one: the reference holds the whole references of two or more remittances, all open, of
 *     one employer, and the amount is the sum of what they are owed: one match per remittance.
 *  4. one_to_many: two or more credits identify the same remittance and, taken in booking order
 *     (booking date, then id), the first of them add up to exactly what is outstanding: one match per
 *     credit. Only those leading runs are tried (at most one can add up, the amounts being positive),
 *     which keeps this linear; any other combination is for a person.
 *  5. tolerance: a credit identifies one remittance and is within toleranceMinor of what is
 *     outstanding: the whole credit matches (the remittance ends that little short or over), flagged.
 *
 * Where credits compete for one remittance, the earliest booked (then lowest id) wins. Nothing else
 * matches. The result does not depend on the order of the inputs.
 */
export function matchCredits(
  credits: readonly UnmatchedCredit[],
  remittances: readonly OpenRemittance[],
  options: MatchingOptions,
): ProposedMatch[] {
  assertInputs(credits, remittances, options.toleranceMinor);
  const sortedCredits = [...credits].sort((a, b) => byText(a.bookingDate, b.bookingDate) || byText(a.id, b.id));
  const sortedRemittances = [...remittances].sort((a, b) => byText(a.payrollId, b.payrollId) || byText(a.payDate, b.payDate));
  const index = new ReferenceIndex(sortedRemittances);

  const matches: ProposedMatch[] = [];
  const usedCredits = new Set<string>();
  const usedRemittances = new Set<string>();
  const isOpen = (remittance: OpenRemittance): boolean => !usedRemittances.has(remittanceKey(remittance));
  const record = (credit: UnmatchedCredit, remittance: OpenRemittance, amount: number, rule: AutomaticMatchRule): void => {
    matches.push({ creditId: credit.id, payrollId: remittance.payrollId, payDate: remittance.payDate, amount, rule, flagged: rule === 'tolerance' });
    usedCredits.add(credit.id);
    usedRemittances.add(remittanceKey(remittance));
  };
  const unusedCredits = (): UnmatchedCredit[] => sortedCredits.filter((credit) => !usedCredits.has(credit.id));
  const payable = (credit: UnmatchedCredit, remittance: OpenRemittance | undefined): remittance is OpenRemittance =>
    remittance !== undefined && isOpen(remittance) && remittance.currency === credit.currency;

  for (const credit of unusedCredits()) {
    const remittance = index.exactly(credit.reference);
    if (payable(credit, remittance) && credit.amount === remittance.outstanding) record(credit, remittance, credit.amount, 'exact');
  }

  for (const credit of unusedCredits()) {
    const remittance = index.identified(credit.reference);
    if (payable(credit, remittance) && credit.amount === remittance.outstanding) record(credit, remittance, credit.amount, 'normalised');
  }

  for (const credit of unusedCredits()) {
    const named = index.wholeReferencesIn(credit.reference).sort((a, b) => byText(remittanceKey(a), remittanceKey(b)));
    if (named.length < 2) continue;
    const oneEmployer = named.every((remittance) => remittance.employerId === named[0]!.employerId);
    if (!oneEmployer || !named.every((remittance) => payable(credit, remittance))) continue;
    if (named.reduce((sum, remittance) => sum + remittance.outstanding, 0) !== credit.amount) continue;
    for (const remittance of named) record(credit, remittance, remittance.outstanding, 'many_to_one');
  }

  const creditsByRemittance = new Map<string, UnmatchedCredit[]>();
  for (const credit of unusedCredits()) {
    const remittance = index.identified(credit.reference);
    if (payable(credit, remittance)) push(creditsByRemittance, remittanceKey(remittance), credit);
  }
  for (const remittance of sortedRemittances) {
    const candidates = creditsByRemittance.get(remittanceKey(remittance)) ?? [];
    // A lone credit for the whole amount was already taken by rule 2, so an exact run here has two or more.
    let runningTotal = 0;
    for (let count = 1; count <= candidates.length && runningTotal < remittance.outstanding; count++) {
      runningTotal += candidates[count - 1]!.amount;
      if (runningTotal === remittance.outstanding) {
        for (const credit of candidates.slice(0, count)) record(credit, remittance, credit.amount, 'one_to_many');
      }
    }
  }

  for (const credit of unusedCredits()) {
    const remittance = index.identified(credit.reference);
    if (payable(credit, remittance) && Math.abs(credit.amount - remittance.outstanding) <= options.toleranceMinor) {
      record(credit, remittance, credit.amount, 'tolerance');
    }
  }

  return matches;
}
