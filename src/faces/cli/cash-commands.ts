import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import type { RemittanceStatus, SetAsideCategory } from '../../platform/db/tables.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { withDatabase } from './command-database.ts';
import { operatorName, parseDateOption, parseUuidOption, parseWholeNumber, typedAmountOption } from './options.ts';
import { REMITTANCE_STATUSES, SET_ASIDE_CATEGORIES } from './vocabulary.ts';

function parseSetAsideCategory(value: string): SetAsideCategory {
  if (!(SET_ASIDE_CATEGORIES as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${SET_ASIDE_CATEGORIES.join(', ')}`);
  return value as SetAsideCategory;
}

function parseStatus(value: string): RemittanceStatus {
  if (!(REMITTANCE_STATUSES as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${REMITTANCE_STATUSES.join(', ')}`);
  return value as RemittanceStatus;
}

/** `PAYROLL_ID:PAY_DATE`: the remittance one allocation of a credit pays; its amount is the --amount of the same rank. */
/** A payroll by name, with its id (which `--to` takes) for the next command. */
function payrollWithId(names: ReadonlyMap<string, string>, payrollId: string): string {
  const name = names.get(payrollId);
  return name ? `${name} (payroll ${payrollId})` : `payroll ${payrollId}`;
}

function parseMatchTarget(value: string, previous: Array<{ payrollId: string; payDate: string }> = []) {
  const parts = value.split(':');
  // The amount was once the third part, in minor units: refused whole, so an old script cannot move 100 times the money.
  if (parts.length === 3) throw new InvalidArgumentError('expected PAYROLL_ID:PAY_DATE; give the amount with --amount, in major units (--amount 31.42)');
  const [payrollId, payDate] = parts;
  if (parts.length !== 2 || !payrollId || !payDate) throw new InvalidArgumentError('expected PAYROLL_ID:PAY_DATE');
  return [...previous, { payrollId: parseUuidOption(payrollId), payDate: parseDateOption(payDate) }];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerCashCommands(program: Command): void {
  const statements = program.command('statements').description('Bank statements of the collection accounts (camt.053, camt.054, CSV)');

  statements
    .command('import')
    .description('Import a statement file and match its credits to remittances; the same file again changes nothing')
    .argument('<file>', 'camt.053 or camt.054 XML, or the CSV layout; - reads standard input')
    .option('--by <name>', 'who imports it (default: the OS user)')
    .action(async (file: string, options: { by?: string }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const config = loadConfig();
      // Opened before anything else, so a missing or unreadable file is one line, not a stream error.
      let source: NodeJS.ReadableStream;
      try {
        source = file === '-' ? process.stdin : (await open(file)).createReadStream();
      } catch (error) {
        program.error(`cannot read ${file}: ${(error as Error).message}`);
      }
      const { importStatement } = await import('../../settlement/cash/statement-import-service.ts');
      const { matchingPolicyOf } = await import('../../settlement/cash/cash-service.ts');
      await withDatabase(async (db) => {
        const outcome = await importStatement(db, {
          source: source as AsyncIterable<Buffer>,
          fileName: file === '-' ? null : basename(file),
          actor: cliActor(operatorName(options.by)),
          maxBytes: config.STATEMENT_LIMIT_BYTES,
          policy: await matchingPolicyOf(db, config),
        });
        for (const recorded of outcome.statements) {
          const s = recorded.statement;
          const name = `${s.format} statement ${s.statement_id}${s.page_number > 1 || !s.last_page ? ` page ${s.page_number}` : ''}`;
          if (recorded.replayed) {
            console.log(`${name} was imported on ${s.imported_at.toISOString()}: nothing changed`);
            continue;
          }
          const outcomes =
            Object.entries(s.entry_outcomes)
              .map(([kind, count]) => `${kind.replaceAll('_', ' ')} ${count}`)
              .join(', ') || 'no entries';
          console.log(`imported ${name}: ${s.credits} credits (${formatMoney(s.credits_total, s.currency)}), ${recorded.newCredits} new; entries: ${outcomes}`);
          for (const entry of recorded.entries.filter((e) => !['new', 'debit', 'already_known', 'superseded'].includes(e.outcome))) {
            console.log(
              `  entry ${entry.index + 1} ${entry.bankReference} ${entry.direction} ${formatMoney(entry.amount, s.currency)}: ${entry.outcome.replaceAll('_', ' ')}${entry.detail ? ` (${entry.detail})` : ''}`,
            );
          }
          for (const finding of s.integrity_findings) console.log(`  check: ${finding.detail}`);
        }
        if (outcome.matching) {
          const m = outcome.matching;
          const rules =
            Object.entries(m.byRule)
              .map(([rule, count]) => `${rule} ${count}`)
              .join(', ') || 'none';
          console.log(`matched ${m.matches} (${rules}); ${m.unmatchedCredits} credit(s) wait in the exceptions queue (deductions credits list)`);
        }
        const r = outcome.reversals;
        if (r.applied + r.unresolved > 0) {
          console.log(
            `reversals: ${r.applied} took back their credit, ${r.unresolved} wait for a person (deductions statements reversals)${r.shortfall > 0 ? `; ${formatMoney(r.shortfall, outcome.statement.currency)} paid out is now owed back` : ''}`,
          );
        }
      });
    });

  statements
    .command('list')
    .description('Statements imported, newest first')
    .option('--limit <n>', 'at most this many', parseWholeNumber, 50)
    .action(async (options: { limit: number }) => {
      const { listBankStatements } = await import('../../settlement/cash/cash-service.ts');
      await withDatabase(async (db) => {
        for (const s of await listBankStatements(db, options.limit)) {
          console.log(
            `${s.imported_at}  ${s.format.padEnd(8)}  ${s.statement_id.padEnd(30)}  ${String(s.credits).padStart(6)} credits  ${formatMoney(s.credits_total, s.currency)}  ${s.id}`,
          );
        }
      });
    });

  statements
    .command('match')
    .description('Run the matching rules again over every unmatched credit (after a remittance changed, say)')
    .action(async () => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { matchingPolicyOf } = await import('../../settlement/cash/cash-service.ts');
      const { runMatching } = await import('../../settlement/cash/matching-service.ts');
      const config = loadConfig();
      await withDatabase(async (db) => {
        const outcome = await runMatching(db, await matchingPolicyOf(db, config));
        console.log(`matched ${outcome.matches}; ${outcome.unmatchedCredits} credit(s) wait in the exceptions queue`);
      });
    });

  statements
    .command('entries')
    .description("A statement's entries and what the import made of each")
    .argument('<statement-id>', 'the imported statement (its id from statements list)', parseUuidOption)
    .action(async (statementId: string) => {
      const { listBankStatementEntries } = await import('../../settlement/cash/cash-service.ts');
      await withDatabase(async (db) => {
        for (const e of await listBankStatementEntries(db, statementId)) {
          console.log(
            `${String(e.entry_index + 1).padStart(5)}  ${e.direction.padEnd(6)}  ${formatMoney(e.amount, e.currency).padStart(16)}  ${(e.booking_date ?? '-').padEnd(10)}  ${e.outcome.padEnd(19)}  ${e.bank_reference}${e.detail ? `  ${e.detail}` : ''}`,
          );
        }
      });
    });

  statements
    .command('reversals')
    .description('Reversals no rule could place: each waits for a person to name the credit the bank took back')
    .option('--limit <n>', 'at most this many', parseWholeNumber, 100)
    .action(async (options: { limit: number }) => {
      const { listReversalsToPlace } = await import('../../settlement/cash/cash-service.ts');
      await withDatabase(async (db) => {
        const rows = await listReversalsToPlace(db, options.limit);
        if (rows.length === 0) console.log('no reversal waits to be placed');
        for (const e of rows) console.log(`${e.id}  ${e.booking_date ?? '-'}  ${formatMoney(e.amount, e.currency).padStart(16)}  ${e.bank_reference}  ${e.detail ?? ''}`);
      });
    });

  statements
    .command('place-reversal')
    .description('Say which credit an unresolved reversal took back: its matches are undone and what was paid out becomes a shortfall')
    .requiredOption('--entry <id>', 'the reversal (from statements reversals)', parseUuidOption)
    .requiredOption('--credit <id>', 'the credit the bank took back', parseUuidOption)
    .requiredOption('--reason <reason>', 'why, for the audit log')
    .option('--by <name>', 'who decides (default: the OS user)')
    .action(async (options: { entry: string; credit: string; reason: string; by?: string }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { matchingPolicyOf } = await import('../../settlement/cash/cash-service.ts');
      const { resolveReversal } = await import('../../settlement/cash/reversal-service.ts');
      const config = loadConfig();
      await withDatabase(async (db) => {
        const placed = await resolveReversal(db, cliActor(operatorName(options.by)), await matchingPolicyOf(db, config), {
          entryId: options.entry,
          creditId: options.credit,
          reason: options.reason,
        });
        console.log(`credit ${placed.creditId} reversed${placed.shortfall > 0 ? `; ${formatMoney(placed.shortfall, placed.currency)} paid out is now owed back` : ''}`);
      });
    });

  const credits = program.command('credits').description('Credits on the collection accounts: the exceptions queue and manual matching');

  credits
    .command('list')
    .description('Credits with money no rule could match, oldest first')
    .option('--limit <n>', 'at most this many', parseWholeNumber, 100)
    .action(async (options: { limit: number }) => {
      const { listCreditsToMatch } = await import('../../settlement/cash/cash-service.ts');
      await withDatabase(async (db) => {
        const rows = await listCreditsToMatch(db, options.limit);
        if (rows.length === 0) console.log('no credit waits to be matched');
        for (const c of rows) {
          console.log(
            `${c.id}  ${c.booking_date}  ${c.state.padEnd(4)}  ${formatMoney(c.unmatched_amount, c.currency).padStart(16)} of ${formatMoney(c.amount, c.currency)}  ${c.remittance_information ?? '-'}  ${c.debtor_name ?? ''}${c.state_reason ? `  (${c.state_reason})` : ''}`,
          );
        }
      });
    });

  credits
    .command('match')
    .description('Match a credit by hand to one or more remittances (repeat --to to split it)')
    .requiredOption('--credit <id>', 'the credit', parseUuidOption)
    .requiredOption('--to <payroll:date>', 'a remittance: the payroll and its pay date (PAYROLL_ID:PAY_DATE); repeat to split the credit', parseMatchTarget)
    .requiredOption('--amount <amount>', "what it gets of the credit, in major units of the credit's currency (31.42 for £31.42); one for each --to, in order", collect)
    .option('--reason <reason>', 'why, for the audit log')
    .option('--by <name>', 'who matches (default: the OS user)')
    .action(async (options: { credit: string; to: Array<{ payrollId: string; payDate: string }>; amount: string[]; reason?: string; by?: string }) => {
      if (options.amount.length !== options.to.length) {
        program.error(`error: give one --amount for each --to (${options.to.length} --to, ${options.amount.length} --amount)`);
      }
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { matchingPolicyOf, showBankCredit } = await import('../../settlement/cash/cash-service.ts');
      const { matchCreditManually } = await import('../../settlement/cash/matching-service.ts');
      const { findPayrollNames } = await import('../../directory/payrolls/directory-repository.ts');
      const config = loadConfig();
      await withDatabase(async (db) => {
        // Amounts are read in the credit's currency: its decimal places decide what may be typed.
        const { currency } = (await showBankCredit(db, options.credit)).credit;
        const allocations = [];
        for (const [index, target] of options.to.entries()) allocations.push({ ...target, amount: await typedAmountOption('--amount', options.amount[index]!, currency) });
        const matches = await matchCreditManually(db, cliActor(operatorName(options.by)), await matchingPolicyOf(db, config), {
          creditId: options.credit,
          allocations,
          reason: options.reason ?? null,
        });
        const names = await findPayrollNames(
          db,
          matches.map((m) => m.payroll_id),
        );
        for (const m of matches) console.log(`matched ${formatMoney(m.amount, currency)} to ${payrollWithId(names, m.payroll_id)}, pay date ${m.pay_date} (match ${m.id})`);
      });
    });

  credits
    .command('set-aside')
    .description('Say a credit is no remittance (bank interest, to return to its sender...): it leaves the queue and no rule matches it')
    .requiredOption('--credit <id>', 'the credit', parseUuidOption)
    .requiredOption('--category <category>', SET_ASIDE_CATEGORIES.join(', '), parseSetAsideCategory)
    .requiredOption('--reason <reason>', 'why, for the audit log')
    .option('--by <name>', 'who decides (default: the OS user)')
    .action(async (options: { credit: string; category: SetAsideCategory; reason: string; by?: string }) => {
      const { setCreditAside } = await import('../../settlement/cash/credit-decision-service.ts');
      await withDatabase(async (db) => {
        const credit = await setCreditAside(db, cliActor(operatorName(options.by)), { creditId: options.credit, category: options.category, reason: options.reason });
        console.log(`credit ${credit.id} set aside (${credit.set_aside_category}): ${formatMoney(credit.amount - credit.matched_amount, credit.currency)} leaves the queue`);
      });
    });

  credits
    .command('restore')
    .description('Give a credit set aside or held back to the queue and the rules')
    .requiredOption('--credit <id>', 'the credit', parseUuidOption)
    .requiredOption('--reason <reason>', 'why, for the audit log')
    .option('--by <name>', 'who decides (default: the OS user)')
    .action(async (options: { credit: string; reason: string; by?: string }) => {
      const { restoreCredit } = await import('../../settlement/cash/credit-decision-service.ts');
      await withDatabase(async (db) => {
        const credit = await restoreCredit(db, cliActor(operatorName(options.by)), { creditId: options.credit, reason: options.reason });
        console.log(`credit ${credit.id} is open again: run \`deductions statements match\` to try the rules`);
      });
    });

  program
    .command('unmatch')
    .description('Take a match back (refused if the remittance has paid out more than would remain)')
    .requiredOption('--match <id>', 'the match', parseUuidOption)
    .requiredOption('--reason <reason>', 'why, for the audit log')
    .option('--by <name>', 'who unmatches (default: the OS user)')
    .action(async (options: { match: string; reason: string; by?: string }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { matchingPolicyOf } = await import('../../settlement/cash/cash-service.ts');
      const { unmatch } = await import('../../settlement/cash/matching-service.ts');
      const { findPayrollNames } = await import('../../directory/payrolls/directory-repository.ts');
      const config = loadConfig();
      await withDatabase(async (db) => {
        const result = await unmatch(db, cliActor(operatorName(options.by)), await matchingPolicyOf(db, config), { matchId: options.match, reason: options.reason });
        const names = await findPayrollNames(db, [result.match.payroll_id]);
        console.log(
          `unmatched ${formatMoney(result.match.amount, result.currency)} from ${payrollWithId(names, result.match.payroll_id)}, pay date ${result.match.pay_date}; received now ${formatMoney(result.received, result.currency)}; ${result.entriesUnfunded} unpaid entries lost their funding`,
        );
      });
    });

  const remittances = program.command('remittances').description("Each payroll pay date's remittance: what its employer owes and what has arrived");

  remittances
    .command('list')
    .description('Remittances, newest pay date first')
    .option('--pay-date <date>', 'only this pay date', parseDateOption)
    .option('--status <status>', 'expected, received, short, over, late or shortfall', parseStatus)
    .option('--limit <n>', 'at most this many', parseWholeNumber, 100)
    .option('--json', 'print as JSON (amounts in minor units, as the API gives them)')
    .action(async (options: { payDate?: string; status?: RemittanceStatus; limit: number; json?: boolean }) => {
      const { listRemittanceResources } = await import('../../settlement/cash/cash-service.ts');
      await withDatabase(async (db) => {
        const rows = await listRemittanceResources(db, {
          limit: options.limit,
          ...(options.payDate ? { payDate: options.payDate } : {}),
          ...(options.status ? { status: options.status } : {}),
        });
        if (options.json) {
          console.log(JSON.stringify({ remittances: rows }, null, 2));
          return;
        }
        for (const r of rows) {
          console.log(
            `${r.pay_date}  ${r.status.padEnd(9)}  expected ${formatMoney(r.expected, r.currency).padStart(14)}  received ${formatMoney(r.received, r.currency).padStart(14)}  owed ${formatMoney(r.owed, r.currency).padStart(14)}${r.shortfall > 0 ? `  owed back ${formatMoney(r.shortfall, r.currency)}` : ''}  due ${r.due_date}  ${r.payment_reference}  ${r.employer_name} / ${r.payroll_name}`,
          );
        }
      });
    });

  remittances
    .command('show')
    .description('One remittance and its matches')
    .requiredOption('--payroll <id>', 'the payroll', parseUuidOption)
    .requiredOption('--pay-date <date>', 'the pay date', parseDateOption)
    .action(async (options: { payroll: string; payDate: string }) => {
      const { showRemittance } = await import('../../settlement/cash/cash-service.ts');
      await withDatabase(async (db) => {
        console.log(JSON.stringify(await showRemittance(db, options.payroll, options.payDate), null, 2));
      });
    });
}
