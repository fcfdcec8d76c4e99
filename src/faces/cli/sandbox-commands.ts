import { InvalidArgumentError, type Command } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import type { SandboxDescription } from '../sandbox/sandbox-setup-service.ts';
import { secretBoxFor } from '../../platform/shared/secret-box.ts';
import { operatorName, parseUuidOption } from './options.ts';
import { SANDBOX_LIMITS } from './vocabulary.ts';

const DEFAULT_EMPLOYERS = 4;
const DEFAULT_EMPLOYEES_PER_PAYROLL = 10;

function wholeNumberWithin(limits: { min: number; max: number }) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < limits.min || n > limits.max) throw new InvalidArgumentError(`expected a whole number from ${limits.min} to ${limits.max}`);
    return n;
  };
}

/** What `sandbox create` prints for a person at the terminal: everything an integrator needs to start. */
export function formatSandbox(sandbox: SandboxDescription): string {
  const lines = [
    sandbox.created
      ? `Sandbox ${sandbox.id} created for biller ${sandbox.live_biller_client_id}`
      : `Biller ${sandbox.live_biller_client_id} already has sandbox ${sandbox.id}; nothing was made`,
    '',
    `Sandbox biller   ${sandbox.biller.client_id}  ${sandbox.biller.name}`,
  ];
  if (sandbox.biller.client_secret && sandbox.biller.api_key) {
    lines.push(
      `  client_secret  ${sandbox.biller.client_secret}`,
      `  api_key        ${sandbox.biller.api_key}`,
      '  Store the secret and API key now: they are kept hashed and cannot be shown again.',
    );
  } else {
    lines.push('  Its credentials were shown when it was made; new ones: `deductions clients rotate-secret` / `rotate-api-key --client <id>`.');
  }
  lines.push(`Payroll provider ${sandbox.payroll_provider.id}  ${sandbox.payroll_provider.name} (files only, simulated)`);
  for (const account of sandbox.beneficiary_accounts) {
    lines.push(`Payouts to       ${account.currency} ${account.sort_code} ${account.account_number} ${account.account_holder_name}`);
  }
  lines.push('', `Employers and payrolls (seed ${sandbox.seed}, ${sandbox.employee_count} employees)`);
  for (const employer of sandbox.employers) {
    lines.push(`  ${employer.name} (${employer.salary_deduction_opt_in_status})`);
    for (const payroll of employer.payrolls) {
      lines.push(`    payroll ${payroll.id}  ${payroll.payment_run_frequency.padEnd(11)} ${payroll.currency}  next pay date ${payroll.next_pay_date ?? 'none'}`);
    }
  }
  lines.push('', 'People to try (availability check in GBP answers as shown)');
  for (const person of sandbox.example_employees) {
    lines.push(
      `  ${`${person.given_name} ${person.family_name}`.padEnd(24)} NI ${person.national_registration_number ?? '-'}  born ${person.date_of_birth ?? '-'}  ` +
        `${(person.postal_code ?? '').padEnd(8)}  ${person.availability_status.padEnd(23)}  employee ${person.employee_id} on payroll ${person.payroll_id}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function registerSandboxCommands(program: Command): void {
  const sandbox = program.command('sandbox').description("Sandbox mode: a biller's test twin with a simulated payroll provider, employers, payrolls and employees");

  sandbox
    .command('create')
    .description(
      'Create the sandbox of a live biller: a sandbox biller client (new secret and API key, shown once), its beneficiary account, ' +
        'a simulated payroll provider with employers, payrolls and employees. Run again for the same biller, it makes nothing and shows the existing sandbox',
    )
    .requiredOption('--biller <id>', 'the live biller client id', parseUuidOption)
    .option(
      '--employers <n>',
      `employers to make (${SANDBOX_LIMITS.employers.min}-${SANDBOX_LIMITS.employers.max}; the last opts out, the one before is pending)`,
      wholeNumberWithin(SANDBOX_LIMITS.employers),
      DEFAULT_EMPLOYERS,
    )
    .option(
      '--employees <n>',
      `employees per payroll (${SANDBOX_LIMITS.employeesPerPayroll.min}-${SANDBOX_LIMITS.employeesPerPayroll.max})`,
      wholeNumberWithin(SANDBOX_LIMITS.employeesPerPayroll),
      DEFAULT_EMPLOYEES_PER_PAYROLL,
    )
    .option('--seed <seed>', 'fixes the people and calendars drawn (default: the biller id)')
    .option('--by <name>', 'who creates it, for the audit log (default: the OS user)')
    .option('--json', 'print as JSON')
    .action(async (options: { biller: string; employers: number; employees: number; seed?: string; by?: string; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { createDatabase } = await import('../../platform/db/connection.ts');
      const { serviceToday } = await import('../../directory/calendars/lock-date.ts');
      const { createSandbox } = await import('../sandbox/sandbox-setup-service.ts');
      const config = loadConfig();
      const db = createDatabase(config.DATABASE_URL, 2);
      try {
        const made = await createSandbox(db, secretBoxFor(config), {
          liveBillerClientId: options.biller,
          employers: options.employers,
          employeesPerPayroll: options.employees,
          seed: options.seed ?? options.biller,
          today: serviceToday(new Date(), config.SERVICE_TIME_ZONE),
          leadTimeWorkingDays: config.DEFAULT_PROVIDER_LEAD_DAYS,
          actor: cliActor(operatorName(options.by)),
        });
        process.stdout.write(options.json ? `${JSON.stringify(made, null, 2)}\n` : formatSandbox(made));
      } catch (error) {
        (await import('./failures.ts')).reportRefusal(error);
      } finally {
        await db.destroy();
      }
    });
}
