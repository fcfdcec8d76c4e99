import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import { PAYROLL_REGIONS, type PayrollProviderResource } from '../../directory/payroll-providers/payroll-provider-resource.ts';
import type { EmployerResource } from '../../directory/payrolls/employer-resource.ts';
import type { PayrollRecord } from '../../directory/payrolls/payroll-setup-resource.ts';
import type { CollectionAccountResource } from '../../settlement/payouts/bank-account-resource.ts';
import { MAX_PAGE_SIZE, type PagingQuery } from '../../platform/shared/paging.ts';
import { secretBoxFor } from '../../platform/shared/secret-box.ts';
import type { RecordVoidResource } from '../../cycle/deduction-records/void-service.ts';
import { formatDecimalMoney } from '../../platform/money/money-text.ts';
import { withDatabase } from './command-database.ts';
import { operatorName, parseDateOption, parseUuidOption, parseWholeNumber } from './options.ts';

// Setting up an installation from the command line: payroll providers, employers, payrolls and the
// collection account, through the same use cases (and the same audit log) as /admin/... in the API.

const OPT_IN_STATUSES = ['pending', 'opted_in', 'opted_out'] as const;
const FREQUENCIES = ['weekly', 'fortnightly', 'four_weekly', 'monthly', 'unknown'] as const;

/** Every page of a listing, for a command that prints them all. */
async function allPages<T>(fetch: (paging: PagingQuery) => Promise<{ items: T[]; after: string | null }>): Promise<T[]> {
  const all: T[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await fetch({ limit: MAX_PAGE_SIZE, ...(after ? { after } : {}) });
    all.push(...page.items);
    if (!page.after) return all;
    after = page.after;
  }
}

const printJson = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/** The command group of this name, made once: other modules may hang their own subcommands on it. */
function group(program: Command, name: string, description: string): Command {
  return program.commands.find((command) => command.name() === name) ?? program.command(name).description(description);
}

// Payroll providers ---------------------------------------------------------------------------------

/** What creating or changing a provider needs beyond its use case: the configuration and the URL policy. */
async function providerSetup() {
  const { loadConfig } = await import('../../platform/config/config.ts');
  const { providerUrlPolicy } = await import('../../directory/payroll-providers/provider-url-guard.ts');
  const { resolveWebhookTarget, systemResolver } = await import('../webhooks/webhook-target.ts');
  return { loadConfig, urlPolicy: providerUrlPolicy(loadConfig().PROVIDER_ALLOW_PRIVATE_URLS, resolveWebhookTarget, systemResolver) };
}

export interface ConnectionOptions {
  filesOnly?: boolean;
  baseUrl?: string;
  tokenUrl?: string;
  clientId?: string;
  clientSecret?: string;
  clientSecretStdin?: boolean;
}

/**
 * The connection the options describe, as the API takes it (undefined: the options leave it alone).
 * --files-only and the reference interface's options exclude each other; the use case checks the
 * rest (which fields a provider reached through its API needs).
 */
export function connectionOfOptions(options: ConnectionOptions, readSecret: () => string): Record<string, unknown> | undefined {
  const clientSecret = options.clientSecretStdin ? readSecret() : options.clientSecret;
  const api = { base_url: options.baseUrl, token_url: options.tokenUrl, client_id: options.clientId, client_secret: clientSecret };
  const given = Object.fromEntries(Object.entries(api).filter(([, value]) => value !== undefined));
  if (options.filesOnly) {
    if (Object.keys(given).length > 0) throw new InvalidArgumentError('--files-only takes none of --base-url, --token-url, --client-id or --client-secret');
    return { kind: 'files' };
  }
  return Object.keys(given).length > 0 ? { kind: 'reference_api', ...given } : undefined;
}

/** The secret piped in (e.g. from a secrets manager), so it is in no shell history or process list. */
function readSecretFromStdin(): string {
  return readFileSync(0, 'utf8').replace(/\r?\n$/, '');
}

export function formatProviderLine(provider: PayrollProviderResource): string {
  const reach =
    provider.connection.kind === 'files'
      ? 'files only'
      : `API ${provider.connection.base_url} (client ${provider.connection.client_id ?? '-'}, secret ${provider.connection.client_secret_set ? 'stored' : 'none'})`;
  const sandbox = provider.sandbox ? '  [sandbox]' : '';
  return `${provider.id}  ${provider.region.padEnd(17)} lead ${provider.lead_time_working_days} working days  ${reach}  ${provider.name}${sandbox}`;
}

function withConnectionOptions(command: Command): Command {
  return command
    .option('--files-only', 'the provider has no API: it takes instruction files only')
    .option('--base-url <url>', "base URL of the provider's reference interface")
    .option('--token-url <url>', 'its OAuth 2.0 token URL')
    .option('--client-id <id>', 'the client id we present to it')
    .option('--client-secret <secret>', 'the client secret we present to it (stored encrypted; prefer --client-secret-stdin)')
    .option('--client-secret-stdin', 'read the client secret from standard input');
}

function registerProviderCommands(program: Command): void {
  const providers = group(program, 'providers', 'Payroll providers: how we reach them, their lead time and region');

  withConnectionOptions(
    providers
      .command('create')
      .description('Add a live payroll provider, reached through its HTTP reference interface or by files only (audited)')
      .requiredOption('--name <name>', 'display name')
      .addOption(new Option('--region <region>', 'whose bank holidays it keeps').choices(PAYROLL_REGIONS).default('england-and-wales'))
      .option('--lead-time <days>', 'working days it needs between lock date and cut-off (0-30); default DEFAULT_PROVIDER_LEAD_DAYS', parseWholeNumber),
  )
    .option('--by <name>', 'who adds it (default: the OS user)')
    .option('--json', 'print the provider as JSON')
    .action(async (options: ConnectionOptions & { name: string; region: string; leadTime?: number; by?: string; json?: boolean }) => {
      const connection = connectionOfOptions(options, readSecretFromStdin);
      if (!connection) throw new InvalidArgumentError('say how we reach the provider: --files-only, or --base-url, --token-url, --client-id and --client-secret');
      const { onboardPayrollProvider } = await import('../../directory/payroll-providers/payroll-provider-service.ts');
      const { loadConfig, urlPolicy } = await providerSetup();
      await withDatabase(async (db) => {
        const input = { name: options.name, region: options.region, connection, ...(options.leadTime === undefined ? {} : { lead_time_working_days: options.leadTime }) };
        const provider = await db
          .transaction()
          .execute((trx) =>
            onboardPayrollProvider(
              trx,
              secretBoxFor(loadConfig()),
              input,
              { actor: cliActor(operatorName(options.by)), defaultLeadTimeWorkingDays: loadConfig().DEFAULT_PROVIDER_LEAD_DAYS },
              urlPolicy,
            ),
          );
        if (options.json) printJson(provider);
        else process.stdout.write(`${formatProviderLine(provider)}\n`);
      });
    });

  providers
    .command('list')
    .description('Every payroll provider, newest first (never a client secret)')
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      const { listPayrollProviderResources } = await import('../../directory/payroll-providers/payroll-provider-service.ts');
      await withDatabase(async (db) => {
        const all = await allPages(async (paging) => {
          const page = await listPayrollProviderResources(db, paging);
          return { items: page.payroll_providers, after: page.paging.after };
        });
        if (options.json) printJson({ payroll_providers: all });
        else process.stdout.write(all.map((provider) => `${formatProviderLine(provider)}\n`).join(''));
      });
    });

  providers
    .command('show')
    .description('One payroll provider (whether a client secret is stored, never the secret)')
    .requiredOption('--provider <id>', 'payroll provider id', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { provider: string; json?: boolean }) => {
      const { getPayrollProvider } = await import('../../directory/payroll-providers/payroll-provider-service.ts');
      await withDatabase(async (db) => {
        const provider = await getPayrollProvider(db, options.provider);
        if (options.json) printJson(provider);
        else process.stdout.write(`${formatProviderLine(provider)}\n`);
      });
    });

  withConnectionOptions(
    providers
      .command('update')
      .description("Change a provider's name, region, lead time or connection; what is not given keeps its value (audited)")
      .requiredOption('--provider <id>', 'payroll provider id', parseUuidOption)
      .option('--name <name>', 'display name')
      .addOption(new Option('--region <region>', 'whose bank holidays it keeps').choices(PAYROLL_REGIONS))
      .option('--lead-time <days>', 'working days it needs between lock date and cut-off (0-30)', parseWholeNumber),
  )
    .option('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who makes the change (default: the OS user)')
    .option('--json', 'print the provider as JSON')
    .action(async (options: ConnectionOptions & { provider: string; name?: string; region?: string; leadTime?: number; reason?: string; by?: string; json?: boolean }) => {
      const connection = connectionOfOptions(options, readSecretFromStdin);
      const change = {
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(options.region === undefined ? {} : { region: options.region }),
        ...(options.leadTime === undefined ? {} : { lead_time_working_days: options.leadTime }),
        ...(connection ? { connection } : {}),
        ...(options.reason === undefined ? {} : { reason: options.reason }),
      };
      const { changePayrollProvider } = await import('../../directory/payroll-providers/payroll-provider-service.ts');
      const { recomputeLockDates } = await import('../../directory/calendars/bank-holiday-service.ts');
      const { loadConfig, urlPolicy } = await providerSetup();
      await withDatabase(async (db) => {
        const { payroll_provider: provider, lock_dates_changed: lockDatesChanged } = await db
          .transaction()
          .execute((trx) =>
            changePayrollProvider(trx, secretBoxFor(loadConfig()), options.provider, change, { actor: cliActor(operatorName(options.by)) }, { recomputeLockDates }, urlPolicy),
          );
        if (options.json) printJson(provider);
        else {
          process.stdout.write(`${formatProviderLine(provider)}\n`);
          if (options.leadTime !== undefined) process.stdout.write(`lock dates moved: ${lockDatesChanged}\n`);
        }
      });
    });
}

// Employers -----------------------------------------------------------------------------------------

export function formatEmployerLines(employer: EmployerResource): string {
  const lines = [`${employer.id}  ${employer.salary_deduction_opt_in_status.padEnd(9)}  provider ${employer.payroll_provider_id}  ${employer.external_id}  ${employer.name}`];
  for (const change of employer.opt_in_history ?? []) {
    const why = change.reason === null ? '' : `: ${change.reason}`;
    lines.push(`  ${change.changed_at}  ${change.from_status ?? '(new)'} -> ${change.to_status}  by ${change.changed_by}${why}`);
  }
  return `${lines.join('\n')}\n`;
}

function registerEmployerCommands(program: Command): void {
  const employers = group(program, 'employers', 'Employers and their salary-deduction opt-in status (with its history)');

  employers
    .command('create')
    .description('Add an employer of a payroll provider; its opt-in status starts its history (audited)')
    .requiredOption('--provider <id>', 'payroll provider id', parseUuidOption)
    .requiredOption('--external-id <id>', "the employer's id at the provider")
    .requiredOption('--name <name>', 'employer name')
    .option('--sic-code <code>', 'SIC code (4 or 5 digits)')
    .option('--industry <name>', 'industry name')
    .addOption(new Option('--opt-in <status>', 'salary-deduction opt-in status').choices(OPT_IN_STATUSES).default('pending'))
    .option('--by <name>', 'who adds it (default: the OS user)')
    .option('--json', 'print the employer as JSON')
    .action(async (options: { provider: string; externalId: string; name: string; sicCode?: string; industry?: string; optIn: string; by?: string; json?: boolean }) => {
      const input = {
        payroll_provider_id: options.provider,
        external_id: options.externalId,
        name: options.name,
        sic_code: options.sicCode ?? null,
        industry_name: options.industry ?? null,
        salary_deduction_opt_in_status: options.optIn,
      };
      const { onboardEmployer } = await import('../../directory/payrolls/employer-service.ts');
      await withDatabase(async (db) => {
        const employer = await db.transaction().execute((trx) => onboardEmployer(trx, input, { actor: cliActor(operatorName(options.by)) }));
        if (options.json) printJson(employer);
        else process.stdout.write(formatEmployerLines(employer));
      });
    });

  employers
    .command('list')
    .description('Employers, newest first, optionally of one provider')
    .option('--provider <id>', 'only this payroll provider', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { provider?: string; json?: boolean }) => {
      const { listEmployerResources } = await import('../../directory/payrolls/employer-service.ts');
      await withDatabase(async (db) => {
        const all = await allPages(async (paging) => {
          const page = await listEmployerResources(db, { payrollProviderId: options.provider }, paging);
          return { items: page.employers, after: page.paging.after };
        });
        if (options.json) printJson({ employers: all });
        else process.stdout.write(all.map(formatEmployerLines).join(''));
      });
    });

  employers
    .command('show')
    .description('One employer with its opt-in history: who moved it, when and why')
    .requiredOption('--employer <id>', 'employer id', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { employer: string; json?: boolean }) => {
      const { getEmployer } = await import('../../directory/payrolls/employer-service.ts');
      await withDatabase(async (db) => {
        const employer = await getEmployer(db, options.employer);
        if (options.json) printJson(employer);
        else process.stdout.write(formatEmployerLines(employer));
      });
    });

  employers
    .command('set-opt-in')
    .description("Change an employer's opt-in status, with the reason (kept in its history and the audit log)")
    .requiredOption('--employer <id>', 'employer id', parseUuidOption)
    .addOption(new Option('--status <status>', 'the new opt-in status').choices(OPT_IN_STATUSES).makeOptionMandatory())
    .requiredOption('--reason <text>', 'why, e.g. the signed opt-in form')
    .option('--by <name>', 'who makes the change (default: the OS user)')
    .option('--json', 'print the employer as JSON')
    .action(async (options: { employer: string; status: string; reason: string; by?: string; json?: boolean }) => {
      const { changeEmployerOptIn } = await import('../../directory/payrolls/employer-service.ts');
      await withDatabase(async (db) => {
        const employer = await db
          .transaction()
          .execute((trx) =>
            changeEmployerOptIn(
              trx,
              options.employer,
              { salary_deduction_opt_in_status: options.status, reason: options.reason },
              { actor: cliActor(operatorName(options.by)) },
            ),
          );
        if (options.json) printJson(employer);
        else process.stdout.write(formatEmployerLines(employer));
      });
    });

  employers
    .command('set-payout-funding')
    .description(
      "What makes the employer's collections payable: received (its remittance on a bank statement), deducted (payroll's report: trusted employers) or default (PAYOUT_FUNDING); audited",
    )
    .requiredOption('--employer <id>', 'employer id', parseUuidOption)
    .addOption(new Option('--funding <funding>', 'received, deducted or default').choices(['received', 'deducted', 'default']).makeOptionMandatory())
    .requiredOption('--reason <text>', 'why')
    .option('--by <name>', 'who makes the change (default: the OS user)')
    .option('--json', 'print the employer as JSON')
    .action(async (options: { employer: string; funding: 'received' | 'deducted' | 'default'; reason: string; by?: string; json?: boolean }) => {
      const { changeEmployerPayoutFunding } = await import('../../directory/payrolls/employer-service.ts');
      await withDatabase(async (db) => {
        const funding = options.funding === 'default' ? null : options.funding;
        const employer = await db
          .transaction()
          .execute((trx) =>
            changeEmployerPayoutFunding(trx, options.employer, { payout_funding: funding, reason: options.reason }, { actor: cliActor(operatorName(options.by)) }),
          );
        if (options.json) printJson(employer);
        else process.stdout.write(formatEmployerLines(employer));
      });
    });
}

// Payrolls ------------------------------------------------------------------------------------------

export function formatPayrollLine(payroll: PayrollRecord): string {
  return `${payroll.id}  ${payroll.payment_run_frequency.padEnd(11)} ${payroll.currency}  ${payroll.bank_holiday_region.padEnd(17)} employer ${payroll.employer_id}  ${payroll.external_id}  ${payroll.name}  ${
    payroll.go_live_date === null ? 'not live' : `live from ${payroll.go_live_date}`
  }`;
}

function formatReadiness(payroll: {
  payrollId: string;
  payroll: string;
  employer: string;
  goLiveDate: string | null;
  ready: boolean;
  findings: Array<{ severity: string; message: string }>;
}): string {
  const goLive = payroll.goLiveDate === null ? 'no go-live date' : `live from ${payroll.goLiveDate}`;
  const head = `${payroll.ready ? 'ready    ' : 'NOT READY'}  ${payroll.employer} / ${payroll.payroll}  (${payroll.payrollId}), ${goLive}\n`;
  return head + payroll.findings.map((finding) => `    ${finding.severity === 'missing' ? 'missing:' : 'notice: '} ${finding.message}\n`).join('');
}

function registerPayrollCommands(program: Command): void {
  const payrolls = group(program, 'payrolls', 'Payrolls of employers (their calendars and employees have commands of their own)');

  payrolls
    .command('create')
    .description("Add a payroll of an employer, run by the employer's payroll provider (audited)")
    .requiredOption('--employer <id>', 'employer id', parseUuidOption)
    .requiredOption('--external-id <id>', "the payroll's id at the provider (a UUID becomes the payroll's id too)")
    .requiredOption('--name <name>', 'payroll name')
    .addOption(new Option('--frequency <frequency>', 'how often it pays').choices(FREQUENCIES).makeOptionMandatory())
    .option('--currency <code>', 'ISO 4217 code', 'GBP')
    .addOption(new Option('--region <region>', "whose bank holidays its calendar follows (default: its provider's)").choices(PAYROLL_REGIONS))
    .option('--by <name>', 'who adds it (default: the OS user)')
    .option('--json', 'print the payroll as JSON')
    .action(async (options: { employer: string; externalId: string; name: string; frequency: string; currency: string; region?: string; by?: string; json?: boolean }) => {
      const input = {
        employer_id: options.employer,
        external_id: options.externalId,
        name: options.name,
        payment_run_frequency: options.frequency,
        currency: options.currency,
        ...(options.region ? { bank_holiday_region: options.region } : {}),
      };
      const { setUpPayroll } = await import('../../directory/payrolls/payroll-setup-service.ts');
      await withDatabase(async (db) => {
        const payroll = await db.transaction().execute((trx) => setUpPayroll(trx, input, { actor: cliActor(operatorName(options.by)) }));
        if (options.json) printJson(payroll);
        else process.stdout.write(`${formatPayrollLine(payroll)}\n`);
      });
    });

  payrolls
    .command('readiness')
    .description('What each payroll still needs before the nightly run can lock its pay dates (collection account, opt-in, calendar); exits 1 while anything is missing')
    .option('--payroll <id>', 'only this payroll', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { payroll?: string; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { listPayrollReadiness } = await import('../../cycle/nightly/go-live-readiness-service.ts');
      await withDatabase(async (db) => {
        const payrolls = await listPayrollReadiness(db, {
          now: new Date(),
          timeZone: loadConfig().SERVICE_TIME_ZONE,
          ...(options.payroll ? { payrollId: options.payroll } : {}),
        });
        if (options.json) printJson({ payrolls });
        else process.stdout.write(payrolls.length === 0 ? 'No payrolls.\n' : payrolls.map(formatReadiness).join(''));
        if (payrolls.some((payroll) => !payroll.ready)) process.exitCode = 1;
      });
    });

  payrolls
    .command('go-live')
    .description(
      "Set a payroll's go-live date, its first pay date to collect: the nightly run never locks or catches up a pay date before it (a payroll's first calendar sets it to its first pay date whose lock date is ahead) (audited)",
    )
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--date <date>', 'the go-live date (YYYY-MM-DD)', parseDateOption)
    .option('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who sets it (default: the OS user)')
    .option('--json', 'print as JSON')
    .action(async (options: { payroll: string; date: string; reason?: string; by?: string; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { serviceToday } = await import('../../directory/calendars/lock-date.ts');
      const { setGoLiveDate } = await import('../../directory/calendars/calendar-service.ts');
      const today = serviceToday(new Date(), loadConfig().SERVICE_TIME_ZONE);
      await withDatabase(async (db) => {
        const change = await db
          .transaction()
          .execute((trx) =>
            setGoLiveDate(
              trx,
              options.payroll,
              { go_live_date: options.date, ...(options.reason ? { reason: options.reason } : {}) },
              { actor: cliActor(operatorName(options.by)), reason: null, today },
            ),
          );
        if (options.json) printJson(change);
        else {
          const first = change.first_pay_date_collected === null ? 'no pay date on or after it yet' : `first pay date collected ${change.first_pay_date_collected}`;
          const was = change.previous_go_live_date === null ? 'none' : change.previous_go_live_date;
          process.stdout.write(`Payroll ${change.payroll_id} goes live ${change.go_live_date} (was ${was}): ${first}\n`);
        }
        for (const warning of change.warnings) process.stderr.write(`warning: ${warning}\n`);
      });
    });

  payrolls
    .command('list')
    .description('Payrolls, newest first, optionally of one employer or provider')
    .option('--employer <id>', 'only this employer', parseUuidOption)
    .option('--provider <id>', 'only this payroll provider', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { employer?: string; provider?: string; json?: boolean }) => {
      const { listPayrollRecords } = await import('../../directory/payrolls/payroll-setup-service.ts');
      await withDatabase(async (db) => {
        const all = await allPages(async (paging) => {
          const page = await listPayrollRecords(db, { employerId: options.employer, payrollProviderId: options.provider }, paging);
          return { items: page.payrolls, after: page.paging.after };
        });
        if (options.json) printJson({ payrolls: all });
        else process.stdout.write(all.map((payroll) => `${formatPayrollLine(payroll)}\n`).join(''));
      });
    });

  payrolls
    .command('update')
    .description("Change a payroll's name, frequency or bank-holiday region; a new region moves its unlocked lock dates (audited)")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .option('--name <name>', 'payroll name')
    .addOption(new Option('--frequency <frequency>', 'how often it pays').choices(FREQUENCIES))
    .addOption(new Option('--region <region>', 'whose bank holidays its calendar follows').choices(PAYROLL_REGIONS))
    .option('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who changes it (default: the OS user)')
    .option('--json', 'print the payroll as JSON')
    .action(async (options: { payroll: string; name?: string; frequency?: string; region?: string; reason?: string; by?: string; json?: boolean }) => {
      const input = {
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(options.frequency === undefined ? {} : { payment_run_frequency: options.frequency }),
        ...(options.region === undefined ? {} : { bank_holiday_region: options.region }),
        ...(options.reason === undefined ? {} : { reason: options.reason }),
      };
      const { changePayroll } = await import('../../directory/payrolls/payroll-setup-service.ts');
      const { recomputeLockDates } = await import('../../directory/calendars/bank-holiday-service.ts');
      await withDatabase(async (db) => {
        const { payroll, lock_dates_changed: moved } = await db
          .transaction()
          .execute((trx) => changePayroll(trx, options.payroll, input, { actor: cliActor(operatorName(options.by)) }, { recomputeLockDates }));
        if (options.json) printJson(payroll);
        else process.stdout.write(`${formatPayrollLine(payroll)}\n${moved} lock dates moved\n`);
      });
    });

  payrolls
    .command('show')
    .description('One payroll: employer, provider, frequency, currency and bank-holiday region')
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { payroll: string; json?: boolean }) => {
      const { getPayrollRecord } = await import('../../directory/payrolls/payroll-setup-service.ts');
      await withDatabase(async (db) => {
        const payroll = await getPayrollRecord(db, options.payroll);
        if (options.json) printJson(payroll);
        else process.stdout.write(`${formatPayrollLine(payroll)}\n`);
      });
    });
}

export function formatVoidLine(voided: RecordVoidResource): string {
  return `${voided.voided_at} ${voided.records} record(s) totalling ${formatDecimalMoney(voided.total_amount, voided.currency)} voided by ${voided.voided_by}: ${voided.reason} (${voided.id})`;
}

function registerReportedRecordCommands(program: Command): void {
  const payrolls = group(program, 'payrolls', 'Payrolls of employers (their calendars and employees have commands of their own)');

  payrolls
    .command('void-records')
    .description(
      'Void every record payroll reported for a pay date (pushes and confirmations): they stop counting and the pay date is as if payroll ' +
        'had reported nothing; the next nightly run reconciles it again (audited; the reason is required)',
    )
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--pay-date <YYYY-MM-DD>', 'the pay date', parseDateOption)
    .requiredOption('--reason <text>', 'why the records cannot stand (kept with the void and in the audit log)')
    .option('--by <name>', 'who voids them (default: the OS user)')
    .option('--json', 'print the void as JSON')
    .action(async (options: { payroll: string; payDate: string; reason: string; by?: string; json?: boolean }) => {
      const { voidPayDateRecords } = await import('../../cycle/deduction-records/void-service.ts');
      await withDatabase(async (db) => {
        const voided = await db
          .transaction()
          .execute((trx) => voidPayDateRecords(trx, cliActor(operatorName(options.by)), { payrollId: options.payroll, payDate: options.payDate, reason: options.reason }));
        if (options.json) printJson(voided);
        else process.stdout.write(`${formatVoidLine(voided)}\nThe next nightly run reconciles pay date ${voided.pay_date} again.\n`);
      });
    });

  payrolls
    .command('voids')
    .description("A payroll pay date's voids of reported records, newest first")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--pay-date <YYYY-MM-DD>', 'the pay date', parseDateOption)
    .option('--json', 'print as JSON')
    .action(async (options: { payroll: string; payDate: string; json?: boolean }) => {
      const { showPayDateVoids } = await import('../../cycle/deduction-records/void-service.ts');
      await withDatabase(async (db) => {
        const voids = await showPayDateVoids(db, options.payroll, options.payDate);
        if (options.json) printJson({ voids });
        else process.stdout.write(voids.length === 0 ? 'No voids.\n' : voids.map((v) => `${formatVoidLine(v)}\n`).join(''));
      });
    });
}

// The collection account ----------------------------------------------------------------------------

export function formatCollectionAccountLine(account: CollectionAccountResource): string {
  const state = account.active ? 'active' : `replaced ${account.deactivated_at ?? ''}`.trim();
  return `${account.currency} ${account.sort_code} ${account.account_number} ${account.account_holder_name} (${account.id}, added ${account.created_at}, ${state})`;
}

function registerCollectionAccountCommands(program: Command): void {
  const accounts = group(program, 'collection-accounts', 'Where employers remit deducted money, per currency: changes keep their history');

  accounts
    .command('set')
    .description('Employers remit in this currency to a new account from now on; the old one is kept, deactivated, and the change audited')
    .requiredOption('--currency <code>', 'ISO 4217 code, e.g. GBP')
    .requiredOption('--sort-code <NN-NN-NN>', 'sort code')
    .requiredOption('--account-number <digits>', 'account number (8 digits)')
    .requiredOption('--holder <name>', 'account holder name')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who makes the change (default: the OS user)')
    .option('--json', 'print the new account as JSON')
    .action(async (options: { currency: string; sortCode: string; accountNumber: string; holder: string; reason: string; by?: string; json?: boolean }) => {
      const details = { currency: options.currency, sort_code: options.sortCode, account_number: options.accountNumber, account_holder_name: options.holder };
      const { replaceCollectionAccount } = await import('../../settlement/payouts/collection-account-service.ts');
      const { toCollectionAccountResource } = await import('../../settlement/payouts/bank-account-resource.ts');
      await withDatabase(async (db) => {
        const { previous, current } = await db
          .transaction()
          .execute((trx) => replaceCollectionAccount(trx, details, { actor: cliActor(operatorName(options.by)), reason: options.reason }));
        const account = toCollectionAccountResource(current);
        if (options.json) {
          printJson({ ...account, replaced: previous ? toCollectionAccountResource(previous) : null });
          return;
        }
        process.stdout.write(`Employers now remit ${account.currency} to\n  ${formatCollectionAccountLine(account)}\n`);
        if (previous) process.stdout.write(`instead of\n  ${formatCollectionAccountLine(toCollectionAccountResource(previous))}\n`);
      });
    });

  accounts
    .command('list')
    .description('Every collection account per currency, the active one and every one it replaced')
    .option('--currency <code>', 'only this currency')
    .option('--json', 'print as JSON')
    .action(async (options: { currency?: string; json?: boolean }) => {
      const { collectionAccountHistory } = await import('../../settlement/payouts/collection-account-service.ts');
      const { toCollectionAccountResource } = await import('../../settlement/payouts/bank-account-resource.ts');
      await withDatabase(async (db) => {
        const accounts = (await collectionAccountHistory(db, { currency: options.currency?.toUpperCase() })).map(toCollectionAccountResource);
        if (options.json) printJson({ collection_accounts: accounts });
        else process.stdout.write(accounts.length === 0 ? 'No collection accounts\n' : accounts.map((a) => `${formatCollectionAccountLine(a)}\n`).join(''));
      });
    });
}

export function registerDirectoryCommands(program: Command): void {
  registerProviderCommands(program);
  registerEmployerCommands(program);
  registerPayrollCommands(program);
  registerReportedRecordCommands(program);
  registerCollectionAccountCommands(program);
}
