import type { MatchRule } from '../../platform/db/tables.ts';

// Employers remit a payroll pay date's deductions to the collection account with its payment
// reference (src/cycle/instructions/payment-reference.ts: SDR + yymmdd + P + the payroll's number, 8 digits
// since references became fixed width, as few as it takes before). Banks pass the payer's text on as
// they please: upper-cased, spaces and punctuation stripped, other words around it, or cut short at
// 18 characters. The rules below tell which credit pays which remittance without ever guessing:
// whatever they cannot place with certainty is left for a person (the exceptions queue), because a
// wrong match pays a biller money that belongs to another payroll. Three things keep them certain:
//
//  - a reference counts only as a whole token of the payer's text: SDR261030P15 inside
//    SDR261030P150 is not P15, and inside XSDR261030P15 or SDR261030P15X it is not a reference the
//    payer wrote on its own (a bank that strips every separator leaves such credits to a person);
//  - a credit that names a remittance no longer open (paid in full, or over) names that one, not
//    another: a duplicate payment of P15 is never taken for P150 cut short, nor for anything else;
//  - a pair a person took apart (unmatched) is never proposed again.

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

/**
 * A remittance no longer open (it has received what it expected, or more): its reference still names
 * it, so a credit quoting it (a duplicate, an over-payment) is known to mean that one and no other.
 */
export interface KnownReference {
  payrollId: string;
  /** YYYY-MM-DD */
  payDate: string;
  paymentReference: string;
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
  /**
   * Credit and remittance pairs a person took apart (unmatched), each as pairKey(...): no rule proposes
   * them again. The credit may still pay another remittance, and the remittance another credit.
   */
  refusedPairs: ReadonlySet<string>;
}

/** A bank cuts a long reference short; a cut-off reference still names a remittance with this many characters left. */
export const TRUNCATED_REFERENCE_MIN_LENGTH = 12;

/** The key of a credit and a remittance (its payroll and YYYY-MM-DD pay date) in MatchingOptions.refusedPairs. */
export function pairKey(creditId: string, payrollId: string, payDate: string): string {
  return JSON.stringify([creditId, payrollId, payDate]);
}

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

/** Whether a token of the payer's text may start or end at `at`: the text's start or end, or a separator the payer wrote. */
const isTokenBoundary = ({ text, separatedBefore }: NormalisedText, at: number): boolean => at === 0 || at === text.length || separatedBefore[at] === true;

const remittanceKey = (remittance: { payrollId: string; payDate: string }): string => `${remittance.payrollId}\u0000${remittance.payDate}`;

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A remittance a reference names: an open one, or (open: null) one no longer open that no rule may pay. */
interface Named {
  key: string;
  open: OpenRemittance | null;
}

/** The first index of `sorted` whose value is not below `value` (code-unit order). */
function lowerBound(sorted: readonly string[], value: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** What a credit's reference names, read once per credit. */
interface Naming {
  /** The open remittance whose payment reference is exactly the trimmed text, if exactly one is. */
  exactly: OpenRemittance | undefined;
  /** The remittances whose whole reference is a token of the text. */
  whole: Named[];
  /** The one remittance the text identifies, if it identifies one and that one is open. */
  identified: OpenRemittance | undefined;
}

/**
 * Which remittances a credit's reference names, built once per run over the open and the known
 * references. Known references can be many (every remittance ever paid), so they are indexed as given,
 * and turned into a Named only when a credit names them.
 */
class ReferenceIndex {
  private readonly openByReference = new Map<string, OpenRemittance[]>();
  /** One remittance, or (rarely: references are unique) several, per normalised reference; no array per reference. */
  private readonly byNormalisedReference = new Map<string, OpenRemittance | KnownReference | Array<OpenRemittance | KnownReference>>();
  private readonly open: ReadonlySet<OpenRemittance | KnownReference>;
  /** Every distinct normalised reference in code-unit order, so those a cut-off text starts lie side by side. */
  private readonly sortedReferences: string[];
  private readonly referenceLengths: number[];

  constructor(remittances: readonly OpenRemittance[], knownReferences: readonly KnownReference[]) {
    this.open = new Set(remittances);
    for (const remittance of remittances) {
      push(this.openByReference, remittance.paymentReference, remittance);
      this.add(remittance);
    }
    for (const known of knownReferences) this.add(known);
    this.sortedReferences = [...this.byNormalisedReference.keys()].sort();
    this.referenceLengths = [...new Set(this.sortedReferences.map((reference) => reference.length))].sort((a, b) => a - b);
  }

  private add(remittance: OpenRemittance | KnownReference): void {
    const normalised = normaliseReference(remittance.paymentReference);
    if (normalised === '') return;
    const already = this.byNormalisedReference.get(normalised);
    if (already === undefined) this.byNormalisedReference.set(normalised, remittance);
    else if (Array.isArray(already)) already.push(remittance);
    else this.byNormalisedReference.set(normalised, [already, remittance]);
  }

  private collect(named: Map<string, Named>, normalisedReference: string): void {
    const found = this.byNormalisedReference.get(normalisedReference);
    if (found === undefined) return;
    for (const remittance of Array.isArray(found) ? found : [found]) {
      const key = remittanceKey(remittance);
      if (!named.has(key)) named.set(key, { key, open: this.open.has(remittance) ? (remittance as OpenRemittance) : null });
    }
  }

  naming(reference: string | null): Naming {
    if (reference === null) return { exactly: undefined, whole: [], identified: undefined };
    const exact = this.openByReference.get(reference.trim()) ?? [];
    const text = normaliseWithSeparators(reference);
    const whole = this.wholeReferencesIn(text);
    // A whole reference outranks a cut-off one: a text holding SDR261030P12 whole means that
    // remittance, open or not, even though it is also how SDR261030P123 would look cut short.
    const named = whole.length > 0 ? whole : this.cutShortAtEndOf(text);
    return { exactly: exact.length === 1 ? exact[0] : undefined, whole, identified: named.length === 1 ? (named[0]!.open ?? undefined) : undefined };
  }

  /**
   * The remittances whose whole (normalised) reference is a token of the credit's text: it starts and
   * ends where the text does or where the payer wrote a separator. Otherwise SDR261030P12 would also
   * name SDR261030P1, and ASDR261030P12 or SDR261030P12B, which is no reference we issued, would name P12.
   */
  private wholeReferencesIn(normalised: NormalisedText): Named[] {
    const { text } = normalised;
    const named = new Map<string, Named>();
    for (let start = 0; start < text.length; start++) {
      if (!isTokenBoundary(normalised, start)) continue;
      for (const length of this.referenceLengths) {
        const end = start + length;
        if (end > text.length) break;
        if (isTokenBoundary(normalised, end)) this.collect(named, text.slice(start, end));
      }
    }
    return [...named.values()];
  }

  /**
   * The remittances, open or not, whose reference the credit's text ends with cut short: from a token
   * start to the end, at least TRUNCATED_REFERENCE_MIN_LENGTH characters, a proper prefix of the
   * reference. At most two: one names it, two mean it could be either.
   */
  private cutShortAtEndOf(normalised: NormalisedText): Named[] {
    const { text } = normalised;
    const named = new Map<string, Named>();
    for (let start = 0; start <= text.length - TRUNCATED_REFERENCE_MIN_LENGTH; start++) {
      if (!isTokenBoundary(normalised, start)) continue;
      const tail = text.slice(start);
      for (let at = lowerBound(this.sortedReferences, tail); at < this.sortedReferences.length && named.size < 2; at++) {
        const reference = this.sortedReferences[at]!;
        if (!reference.startsWith(tail)) break;
        if (reference.length > tail.length) this.collect(named, reference);
      }
    }
    return [...named.values()].slice(0, 2);
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

function assertInputs(
  credits: readonly UnmatchedCredit[],
  remittances: readonly OpenRemittance[],
  knownReferences: readonly KnownReference[],
  options: MatchingOptions,
): void {
  // Matching is order-independent only because credits and remittances sort on unique keys; a
  // duplicate would make the outcome depend on which copy came first.
  const creditIds = new Set<string>();
  for (const credit of credits) {
    if (creditIds.has(credit.id)) throw new RangeError(`credit ${credit.id} is given twice`);
    creditIds.add(credit.id);
    assertPositiveMinorUnits(credit.amount, `credit ${credit.id}'s amount`);
  }
  // By payroll, then pay date: the known references below can be many, and this builds no key for them.
  const openPayDates = new Map<string, Set<string>>();
  for (const remittance of remittances) {
    const payDates = openPayDates.get(remittance.payrollId) ?? new Set<string>();
    if (payDates.has(remittance.payDate)) throw new RangeError(`remittance ${remittance.payrollId} ${remittance.payDate} is given twice`);
    openPayDates.set(remittance.payrollId, payDates.add(remittance.payDate));
    assertPositiveMinorUnits(remittance.outstanding, `remittance ${remittance.payrollId} ${remittance.payDate}'s outstanding amount`);
  }
  // Leaving these out would quietly undo what they protect (a duplicate taken for another payroll's
  // remittance, a person's unmatch undone): an empty list or set says there are none.
  if (!Array.isArray(knownReferences)) throw new TypeError('knownReferences must list the references of the remittances no longer open ([] when there are none)');
  // Open or not decides whether a rule may pay it: one remittance cannot be both. A known reference
  // given twice is harmless (both name the same remittance).
  for (const known of knownReferences) {
    if (openPayDates.get(known.payrollId)?.has(known.payDate)) {
      throw new RangeError(`remittance ${known.payrollId} ${known.payDate} is given both as open and as no longer open`);
    }
  }
  if (typeof options.refusedPairs?.has !== 'function')
    throw new TypeError('refusedPairs must be the set of pairKey(...) a person unmatched (an empty set when there are none)');
  if (!Number.isSafeInteger(options.toleranceMinor) || options.toleranceMinor < 0) {
    throw new RangeError(`the tolerance must be a non-negative integer of minor units, got ${String(options.toleranceMinor)}`);
  }
}

/**
 * Proposes which open remittances the unmatched credits pay. Rules, in this order; a credit or
 * remittance an earlier rule used is not offered to a later one, a credit only ever pays a remittance
 * of its own currency, and never one a person unmatched it from (options.refusedPairs):
 *
 *  1. exact: the trimmed reference is the payment reference (of no other remittance, open or not) and
 *     the amount is what is outstanding.
 *  2. normalised: the reference, in letters and digits, identifies one remittance (is its reference,
 *     holds it as a whole token, or ends with it cut short to 12+ characters from a token start) and
 *     the amount is what is outstanding.
 *  3. many_to_one: the reference holds the whole references of two or more remittances, all open, of
 *     one employer, and the amount is the sum of what they are owed: one match per remittance.
 *  4. one_to_many: two or more credits identify the same remittance and, taken in booking order
 *     (booking date, then id), the first of them add up to exactly what is outstanding: one match per
 *     credit. Only those leading runs are tried (at most one can add up, the amounts being positive),
 *     which keeps this linear; any other combination is for a person.
 *  5. tolerance: a credit identifies one remittance and is within toleranceMinor of what is
 *     outstanding: the whole credit matches (the remittance ends that little short or over), flagged.
 *
 * `knownReferences` are the references of remittances no longer open. A credit whose text names one
 * of them (whole, or cut short where that could be it) names that remittance, so it identifies no
 * other: it is left for a person (a duplicate or an over-payment). A credit naming several
 * remittances, or one ambiguously, identifies none.
 *
 * Where credits compete for one remittance, the earliest booked (then lowest id) wins. Nothing else
 * matches. The result does not depend on the order of the inputs.
 */
export function matchCredits(
  credits: readonly UnmatchedCredit[],
  remittances: readonly OpenRemittance[],
  knownReferences: readonly KnownReference[],
  options: MatchingOptions,
): ProposedMatch[] {
  assertInputs(credits, remittances, knownReferences, options);
  const sortedCredits = [...credits].sort((a, b) => byText(a.bookingDate, b.bookingDate) || byText(a.id, b.id));
  const sortedRemittances = [...remittances].sort((a, b) => byText(a.payrollId, b.payrollId) || byText(a.payDate, b.payDate));
  const index = new ReferenceIndex(sortedRemittances, knownReferences);
  const namingOf = new Map(sortedCredits.map((credit) => [credit.id, index.naming(credit.reference)]));
  const naming = (credit: UnmatchedCredit): Naming => namingOf.get(credit.id)!;

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
  const payable = (credit: UnmatchedCredit, remittance: OpenRemittance | null | undefined): remittance is OpenRemittance =>
    remittance !== undefined &&
    remittance !== null &&
    isOpen(remittance) &&
    remittance.currency === credit.currency &&
    !options.refusedPairs.has(pairKey(credit.id, remittance.payrollId, remittance.payDate));

  for (const credit of unusedCredits()) {
    const { exactly, identified } = naming(credit);
    if (payable(credit, exactly) && exactly === identified && credit.amount === exactly.outstanding) record(credit, exactly, credit.amount, 'exact');
  }

  for (const credit of unusedCredits()) {
    const remittance = naming(credit).identified;
    if (payable(credit, remittance) && credit.amount === remittance.outstanding) record(credit, remittance, credit.amount, 'normalised');
  }

  for (const credit of unusedCredits()) {
    const named = [...naming(credit).whole].sort((a, b) => byText(a.key, b.key));
    if (named.length < 2) continue;
    const payables = named.map((remittance) => remittance.open).filter((remittance) => payable(credit, remittance));
    if (payables.length !== named.length) continue;
    if (!payables.every((remittance) => remittance.employerId === payables[0]!.employerId)) continue;
    if (payables.reduce((sum, remittance) => sum + remittance.outstanding, 0) !== credit.amount) continue;
    for (const remittance of payables) record(credit, remittance, remittance.outstanding, 'many_to_one');
  }

  const creditsByRemittance = new Map<string, UnmatchedCredit[]>();
  for (const credit of unusedCredits()) {
    const remittance = naming(credit).identified;
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
    const remittance = naming(credit).identified;
    if (payable(credit, remittance) && Math.abs(credit.amount - remittance.outstanding) <= options.toleranceMinor) {
      record(credit, remittance, credit.amount, 'tolerance');
    }
  }

  return matches;
}
