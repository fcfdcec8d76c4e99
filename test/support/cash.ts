import { createHash } from 'node:crypto';
import { cliActor } from '../../src/platform/audit/audit-service.ts';
import type { ParsedStatement, ParsedStatementFile, StatementEntry } from '../../src/settlement/cash/bank-statement.ts';
import type { MatchingPolicy } from '../../src/settlement/cash/matching-service.ts';
import type { Database } from '../../src/platform/db/connection.ts';
import { replaceBeneficiaryAccount } from '../../src/settlement/payouts/beneficiary-account-service.ts';
import { recordStatement } from '../../src/settlement/cash/statement-import-service.ts';
import { createWorld, PD1 } from '../cycle/reconciliation/reconciliation-world.ts';

/** Three payment requests on PD1: 24 800 in all. */
export const CASH_AMOUNTS = [12_550, 8_000, 4_250] as const;

export const cashPolicy = (today: string): MatchingPolicy => ({ today, lateWorkingDays: 3, toleranceMinor: 100, holidays: new Set() });

/**
 * A payroll paying PD1 with a payment request per employee (three of CASH_AMOUNTS, or `amounts`,
 * oldest first), locked, reported by payroll (`deducted` per employee, in full unless said) and
 * reconciled, with the biller's beneficiary account: its remittance expects what was deducted.
 * `reference` is the pay date's payment reference.
 */
export async function reconciledPayDate(db: Database, options: { amounts?: readonly number[]; deducted?: readonly number[]; trusted?: boolean } = {}) {
  const amounts = options.amounts ?? CASH_AMOUNTS;
  const w = await createWorld(db, { employees: amounts.length });
  if (options.trusted) await db.updateTable('employers').set({ payout_funding: 'deducted' }).where('id', '=', w.employer.id).execute();
  for (const [index, amount] of amounts.entries()) await w.payment(index, amount);
  await w.lock(PD1);
  for (const [index, amount] of (options.deducted ?? amounts).entries()) await w.push(w.people[index]!.employee.id, PD1, amount);
  await w.reconcile(PD1, { today: '2026-10-31' });
  await giveBillerAnAccount(db, w.biller.clientId);
  const reference = await db
    .selectFrom('requested_payments as rp')
    .innerJoin('deduction_snapshots as s', 's.id', 'rp.snapshot_id')
    .select('rp.payment_reference')
    .where('s.payroll_id', '=', w.payroll.id)
    .executeTakeFirstOrThrow();
  return { ...w, reference: reference.payment_reference };
}

/** An entry as the parsers hand it over: a plain credit on PD1 in GBP, with `fields` over it. */
export function statementEntry(index: number, bankReference: string, fields: Partial<StatementEntry> & { amount: number }): StatementEntry {
  return {
    position: { line: index + 2 },
    index,
    bankReference,
    accountServicerReference: fields.bankReference ?? bankReference,
    entryReference: null,
    transactionReferences: [],
    batch: null,
    direction: 'credit',
    reversal: false,
    bankTransactionCode: null,
    returnReason: null,
    currency: 'GBP',
    bookingDate: '2026-10-30',
    valueDate: '2026-10-30',
    remittanceInformation: null,
    debtorName: 'Employer Ltd',
    debtorAccount: null,
    problem: null,
    ...fields,
  };
}

/** A parsed statement file of one statement: no pages, balances or summary unless given. */
export function statementFile(
  account: { sort_code: string; account_number: string },
  id: string,
  entries: StatementEntry[],
  options: { format?: ParsedStatement['format']; page?: ParsedStatement['page']; electronicSequenceNumber?: string | null; legalSequenceNumber?: string | null } = {},
): ParsedStatementFile {
  const format = options.format ?? 'csv';
  return {
    format,
    statements: [
      {
        format,
        statementId: id,
        page: options.page ?? { number: 1, last: true },
        electronicSequenceNumber: options.electronicSequenceNumber ?? null,
        legalSequenceNumber: options.legalSequenceNumber ?? null,
        account: { sortCode: account.sort_code, accountNumber: account.account_number },
        currency: 'GBP',
        balances: [],
        summary: null,
        entries,
      },
    ],
  };
}

/**
 * A statement as the parser would hand it over (so tests of what follows need no file): credits on
 * PD1 in GBP, each with a bank reference of its own unless given.
 */
export function parsedStatement(
  account: { sort_code: string; account_number: string },
  id: string,
  credits: ReadonlyArray<Partial<StatementEntry> & { amount: number }>,
  options: { format?: ParsedStatement['format'] } = {},
) {
  const entries = credits.map((credit, index) => statementEntry(index, credit.bankReference ?? `${id}-${index}`, credit));
  const parsed = statementFile(account, id, entries, options);
  return { parsed, digest: createHash('sha256').update(JSON.stringify(parsed)).digest(), fileName: `${id}.csv` };
}

/** The biller's GBP beneficiary account (a valid sort code and account number), as onboarding sets it: payouts need one. */
export async function giveBillerAnAccount(db: Database, billerClientId: string, actor = cliActor('fixture')) {
  await db
    .transaction()
    .execute((trx) =>
      replaceBeneficiaryAccount(
        trx,
        billerClientId,
        { currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' },
        { actor, reason: 'onboarding' },
      ),
    );
}

/** Imports a statement of these credits into the active GBP collection account, as of `today`; the credits' ids in order. */
export async function importCredits(db: Database, id: string, credits: ReadonlyArray<Partial<StatementEntry> & { amount: number }>, today: string): Promise<string[]> {
  const account = await db.selectFrom('collection_accounts').selectAll().where('currency', '=', 'GBP').where('active', '=', true).executeTakeFirstOrThrow();
  const outcome = await db
    .transaction()
    .execute((trx) => recordStatement(trx, { ...parsedStatement(account, id, credits), actor: cliActor('fixture'), policy: cashPolicy(today) }));
  return outcome.statements[0]!.entries.map((entry) => entry.creditId!);
}
