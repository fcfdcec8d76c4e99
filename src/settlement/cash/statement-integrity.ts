import { MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import type { ParsedStatement, StatementBalance, StatementEntry } from './bank-statement.ts';

// A statement's own arithmetic, checked without the database: its balances (opening + booked entries =
// closing) and its totals (TxsSummry) against the entries it carries. Pure: the import decides what a
// finding does (it records them with the statement); the previous statement's sequence number is the
// caller's to look up (sequenceGap).
//
// Booked entries are what the balance moves by: every entry the parser returns (they are all booked),
// debits, reversals and entries with a problem included, each by the amount that could be read (an
// entry whose amount could not be read counts 0, which the check then shows). A batch booked as one
// entry but split into parts counts once, as the bank counted it in TxsSummry.
//
// Only a whole statement is checked: page 1 of 1. A page of a longer statement carries part of its
// entries, so neither its balances nor its totals can be checked alone: the import checks a paginated
// statement across its pages. A camt.053 statement without any balance is a finding of its own;
// camt.054 notifications and the CSV layout carry no balances, so they have none to check.

export type IntegrityFindingCode = 'balance_mismatch' | 'summary_count_mismatch' | 'summary_sum_mismatch' | 'summary_net_mismatch' | 'no_balances';

export interface IntegrityFinding {
  code: IntegrityFindingCode;
  /** For a person: the figures that disagree, in major units with their currency. */
  detail: string;
}

/** One entry as the bank booked it: a batch's parts taken together again. */
interface BookedEntry {
  direction: 'credit' | 'debit';
  /** Positive minor units. */
  amount: bigint;
  signed: bigint;
}

export function statementIntegrityFindings(statement: ParsedStatement): IntegrityFinding[] {
  const findings: IntegrityFinding[] = [];
  if (statement.format === 'camt.053' && statement.balances.length === 0) {
    findings.push({ code: 'no_balances', detail: 'the statement has no balances (Bal): its entries cannot be checked against an opening and a closing balance' });
  }
  if (statement.page.number !== 1 || !statement.page.last) return findings;

  const currency = statement.currency ?? statement.balances[0]?.currency ?? statement.entries.find((entry) => entry.currency !== '')?.currency ?? null;
  if (currency === null) return findings;
  const counted = statement.entries.filter((entry) => entry.currency === currency);
  const leftOut = statement.entries.length - counted.length;
  const note = leftOut === 0 ? '' : ` (${leftOut} ${leftOut === 1 ? 'entry' : 'entries'} in another currency than ${currency} left out)`;
  const booked = bookedEntries(counted);
  const money = (minor: bigint | number) => formatMoney(minor, currency);
  const net = booked.reduce((sum, entry) => sum + entry.signed, 0n);

  const opening = firstOfType(statement.balances, 'OPBD') ?? firstOfType(statement.balances, 'PRCD');
  const closing = firstOfType(statement.balances, 'CLBD');
  if (opening !== undefined && closing !== undefined && opening.currency === currency && closing.currency === currency) {
    const expected = BigInt(opening.amount) + net;
    if (expected !== BigInt(closing.amount)) {
      findings.push({
        code: 'balance_mismatch',
        detail:
          `the opening balance (${opening.type}) ${money(opening.amount)} and the booked entries' net ${money(net)} make ${money(expected)}, ` +
          `but the closing balance (CLBD) is ${money(closing.amount)}: ${money(BigInt(closing.amount) - expected)} unaccounted for${note}`,
      });
    }
  }

  const summary = statement.summary;
  if (summary === null) return findings;
  const groups: Array<{ what: string; summary: { count: number | null; sum: number | null } | null; entries: BookedEntry[] }> = [
    { what: 'entries (TtlNtries)', summary: summary.entries, entries: booked },
    { what: 'credit entries (TtlCdtNtries)', summary: summary.credits, entries: booked.filter((entry) => entry.direction === 'credit') },
    { what: 'debit entries (TtlDbtNtries)', summary: summary.debits, entries: booked.filter((entry) => entry.direction === 'debit') },
  ];
  for (const { what, summary: totals, entries } of groups) {
    if (totals === null) continue;
    if (totals.count !== null && totals.count !== entries.length) {
      findings.push({ code: 'summary_count_mismatch', detail: `TxsSummry counts ${totals.count} ${what}; the statement has ${entries.length}${note}` });
    }
    const sum = entries.reduce((total, entry) => total + entry.amount, 0n);
    if (totals.sum !== null && BigInt(totals.sum) !== sum) {
      findings.push({ code: 'summary_sum_mismatch', detail: `TxsSummry sums the ${what} to ${money(totals.sum)}; the statement's add up to ${money(sum)}${note}` });
    }
  }
  if (summary.entries?.net !== null && summary.entries?.net !== undefined && BigInt(summary.entries.net) !== net) {
    findings.push({ code: 'summary_net_mismatch', detail: `TxsSummry gives the entries' net as ${money(summary.entries.net)}; the statement's net is ${money(net)}${note}` });
  }
  return findings;
}

function firstOfType(balances: readonly StatementBalance[], type: string): StatementBalance | undefined {
  return balances.find((balance) => balance.type === type);
}

/** The entries as the bank booked them: the parts of a batch (part 1 to N in a row) are one entry of the lump's amount. */
function bookedEntries(entries: readonly StatementEntry[]): BookedEntry[] {
  const booked: BookedEntry[] = [];
  let batch: { signed: bigint; amount: bigint; remaining: number } | undefined;
  for (const entry of entries) {
    const signed = BigInt(entry.direction === 'credit' ? entry.amount : -entry.amount);
    if (entry.batch !== null && batch !== undefined && entry.batch.part > 1 && batch.remaining > 0) {
      batch.signed += signed;
      batch.remaining -= 1;
    } else if (entry.batch !== null) {
      batch = { signed, amount: BigInt(entry.batch.amount), remaining: entry.batch.parts - 1 };
    } else {
      batch = undefined;
      booked.push({ direction: entry.direction, amount: BigInt(entry.amount), signed });
      continue;
    }
    if (batch.remaining === 0) {
      // The parts' signed total is the lump's (the parser splits only then), so its sign is the lump's direction.
      booked.push({ direction: batch.signed < 0n ? 'debit' : 'credit', amount: batch.amount, signed: batch.signed });
      batch = undefined;
    }
  }
  return booked;
}

const SEQUENCE_NUMBER = /^\d{1,30}$/;

/**
 * What is wrong with a statement's sequence number following the previous statement's of the same
 * account (camt ElctrncSeqNb, or LglSeqNb with `name` 'legal sequence'): a gap ("electronic sequence 41
 * follows 39: 40 is missing"), a repeat, or a step back; null when it follows on, or when either is
 * unknown or not a plain number (a bank's own numbering cannot be judged).
 */
export function sequenceGap(previous: string | null, current: string | null, name = 'electronic sequence'): string | null {
  if (previous === null || current === null) return null;
  if (!SEQUENCE_NUMBER.test(previous) || !SEQUENCE_NUMBER.test(current)) return null;
  const before = BigInt(previous);
  const now = BigInt(current);
  if (now === before + 1n) return null;
  if (now === before) return `${name} ${now} repeats the previous statement's`;
  if (now < before) return `${name} ${now} follows ${before}: it goes back (a statement sent again, or the bank restarted its numbering)`;
  const missing = now - before - 1n;
  return missing === 1n
    ? `${name} ${now} follows ${before}: ${before + 1n} is missing`
    : `${name} ${now} follows ${before}: ${before + 1n} to ${now - 1n} (${missing} statements) are missing`;
}

/**
 * What a statement's credit entries add up to, exactly, or the reason it cannot be taken: past
 * MAX_EXACT_MINOR_UNITS no total the service shows (`credits_total`, a JSON number) or sums further
 * (what a remittance receives) stays exact.
 */
export function creditsTotalOrProblem(creditAmounts: readonly number[], currency: string): { total: number; problem: null } | { total: null; problem: string } {
  const total = creditAmounts.reduce((sum, amount) => sum + BigInt(amount), 0n);
  if (total <= BigInt(MAX_EXACT_MINOR_UNITS)) return { total: Number(total), problem: null };
  return {
    total: null,
    problem: `the statement's credits add up to ${formatMoney(total, currency)}, more than ${formatMoney(MAX_EXACT_MINOR_UNITS, currency)}, the most one statement may carry`,
  };
}
