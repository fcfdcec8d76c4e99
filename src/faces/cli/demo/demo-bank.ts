import { mkdirSync, writeFileSync, createReadStream } from 'node:fs';
import path from 'node:path';
import { cliActor } from '../../../platform/audit/audit-service.ts';
import { listCreditsToMatch, listRemittanceResources, matchingPolicyOf } from '../../../settlement/cash/cash-service.ts';
import { matchCreditManually, runMatching } from '../../../settlement/cash/matching-service.ts';
import { importStatement } from '../../../settlement/cash/statement-import-service.ts';
import type { Config } from '../../../platform/config/config.ts';
import type { Database } from '../../../platform/db/connection.ts';
import { payrollLabel, pounds, remittanceInWords } from './demo-wording.ts';
import { simulatedCamt053, type SimulatedEntry } from '../../sandbox/simulated-bank-statement.ts';

type Print = (line?: string) => void;

/**
 * The demo's employers remit and its bank sends the day's statement: most employers pay each payroll
 * pay date on time with its reference; the first employer with two payrolls pays both in one credit;
 * one employer pays nothing yet (late); one pays short, and finance matches that credit by hand; a
 * stray credit nobody can place waits in the exceptions queue. The statement is an ISO 20022
 * camt.053 file, imported like any bank's.
 */
export async function remitAndImportStatement(
  db: Database,
  config: Config,
  options: { statementDate: string; firstPayDate: string; account: { sortCode: string; accountNumber: string }; filesDir: string; print: Print },
) {
  const { print } = options;
  // Remittances are brought up to date as of the first pay date: nothing is late yet.
  await runMatching(db, await matchingPolicyOf(db, config, options.firstPayDate));
  const remittances = (await listRemittanceResources(db, { limit: 1_000 })).sort(
    (a, b) => a.employer_name.localeCompare(b.employer_name) || a.pay_date.localeCompare(b.pay_date) || a.payroll_id.localeCompare(b.payroll_id),
  );
  const byEmployer = new Map<string, typeof remittances>();
  for (const remittance of remittances) byEmployer.set(remittance.employer_id, [...(byEmployer.get(remittance.employer_id) ?? []), remittance]);
  const employers = [...byEmployer.values()];
  const combined = employers.find((payrolls) => payrolls.length >= 2);
  const others = employers.filter((payrolls) => payrolls !== combined);
  const late = others[0];
  const short = others[1];

  const entries: SimulatedEntry[] = [];
  const credit = (amount: number, bookingDate: string, reference: string | null, debtorName: string) =>
    entries.push({
      bankReference: `BNK-${options.statementDate.replaceAll('-', '')}-${String(entries.length + 1).padStart(4, '0')}`,
      direction: 'credit',
      amount,
      bookingDate,
      reference,
      debtorName,
    });
  for (const payrolls of employers) {
    if (payrolls === late) continue;
    if (payrolls === combined) {
      const [first, second] = payrolls;
      credit(first!.expected + second!.expected, second!.pay_date, `${first!.payment_reference} ${second!.payment_reference}`, first!.employer_name);
      for (const rest of payrolls.slice(2)) credit(rest.expected, rest.pay_date, rest.payment_reference, rest.employer_name);
      continue;
    }
    for (const remittance of payrolls) {
      const shortBy = payrolls === short && remittance === payrolls[0] ? Math.max(1, Math.floor(remittance.expected / 10)) : 0;
      credit(remittance.expected - shortBy, remittance.pay_date, remittance.payment_reference, remittance.employer_name);
    }
  }
  credit(15_000, options.statementDate, 'INV 4471 REFUND', 'Office Supplies Ltd');

  const file = path.join(options.filesDir, 'bank', `camt053-${options.statementDate}.xml`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, demoStatementXml({ statementDate: options.statementDate, account: options.account, entries }));
  const policy = await matchingPolicyOf(db, config, options.statementDate);
  const outcome = await importStatement(db, {
    source: createReadStream(file),
    fileName: path.basename(file),
    actor: cliActor('finance (demo)'),
    maxBytes: config.STATEMENT_LIMIT_BYTES,
    policy,
  });
  const matching = outcome.matching!;
  print(`  ${file}`);
  print(
    `  ${outcome.statement.credits} credits (${pounds(outcome.statement.credits_total)}): matched ${matching.matches} ` +
      `(${Object.entries(matching.byRule)
        .map(([rule, n]) => `${rule} ${n}`)
        .join(', ')}); ${matching.unmatchedCredits} wait in the exceptions queue`,
  );
  if (late) {
    // Said by each remittance's status as of the statement's day (remittanceInWords): late only once its due date has passed.
    const owing = (await listRemittanceResources(db, { limit: 1_000 })).filter((r) => r.employer_id === late[0]!.employer_id);
    print(`  ${late[0]!.employer_name} has not paid yet:`);
    for (const r of owing.sort((a, b) => a.pay_date.localeCompare(b.pay_date))) {
      print(`    ${payrollLabel(r.employer_name, r.payroll_name)} pay date ${r.pay_date} (${r.payment_reference}): ${remittanceInWords(r)}`);
    }
  }

  // Finance places the short credit by hand (the rules match exact amounts, or within the tolerance).
  if (short) {
    const target = short[0]!;
    const waiting = (await listCreditsToMatch(db, 100)).find((c) => c.remittance_information === target.payment_reference);
    if (waiting) {
      await matchCreditManually(db, cliActor('finance (demo)'), policy, {
        creditId: waiting.id,
        allocations: [{ payrollId: target.payroll_id, payDate: target.pay_date, amount: waiting.unmatched_amount }],
        reason: 'employer confirmed the rest follows next week',
      });
      print(
        `  finance matched ${target.employer_name}'s short credit of ${pounds(waiting.unmatched_amount)} (of ${pounds(target.expected)}, ${payrollLabel(target.employer_name, target.payroll_name)} pay date ${target.pay_date}) by hand`,
      );
    }
  }
  const left = await listCreditsToMatch(db, 100);
  for (const stray of left) print(`  exceptions queue: ${pounds(stray.unmatched_amount)} from ${stray.debtor_name ?? 'unknown'} "${stray.remittance_information ?? ''}"`);

  print(`  ${'employer'.padEnd(30)} ${'payroll'.padEnd(19)} ${'pay date'.padEnd(10)} ${'expected'.padStart(11)} ${'received'.padStart(11)} status`);
  for (const r of (await listRemittanceResources(db, { limit: 1_000 })).sort(
    (a, b) => a.employer_name.localeCompare(b.employer_name) || a.pay_date.localeCompare(b.pay_date) || a.payroll_name.localeCompare(b.payroll_name),
  )) {
    print(
      `  ${r.employer_name.padEnd(30)} ${payrollLabel(r.employer_name, r.payroll_name).padEnd(19)} ${r.pay_date} ${pounds(r.expected).padStart(11)} ${pounds(r.received).padStart(11)} ${r.status}`,
    );
  }
}

/** What the demo's collection account holds before the statement's day: £25,000.00. */
const DEMO_OPENING_BALANCE = 2_500_000;

/**
 * The demo bank's end-of-day statement of the collection account: camt.053.001.02, valid against the
 * official schema (test/settlement/cash/written-xml-xsd.test.ts), its opening balance the account's float and its
 * closing balance that plus the day's entries, as a bank's adds up.
 */
export function demoStatementXml(options: { statementDate: string; account: { sortCode: string; accountNumber: string }; entries: readonly SimulatedEntry[] }): string {
  return simulatedCamt053({
    statementId: `STMT-${options.statementDate}`,
    account: options.account,
    currency: 'GBP',
    createdAt: new Date(`${options.statementDate}T18:00:00Z`),
    openingBalance: DEMO_OPENING_BALANCE,
    entries: options.entries,
  });
}
