import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { SingleBar, Presets } from 'cli-progress';
import { parseConfig, type Config } from '../../../platform/config/config.ts';
import { createClient, type IssuedCredentials } from '../../../directory/auth/clients-service.ts';
import { TokenIssuer } from '../../../directory/auth/token-issuer.ts';
import { serviceToday } from '../../../directory/calendars/lock-date.ts';
import { regionalHolidays } from '../../../directory/calendars/bank-holidays.ts';
import { recreateDatabase } from '../../../platform/db/admin.ts';
import { migrateToLatest } from '../../../platform/db/migrator.ts';
import { runNightlyNow } from '../../workers/nightly-runner.ts';
import { buildApp } from '../../http/app.ts';
import { fromMajorUnits } from '../../../platform/money/major-units.ts';
import { formatMoney } from '../../../platform/money/money-text.ts';
import { payrollLabel, pounds } from './demo-wording.ts';
import { httpAdapterFactory } from '../../../directory/payroll-providers/http-adapter.ts';
import { providerUrlPolicy } from '../../../directory/payroll-providers/provider-url-guard.ts';
import { resolveWebhookTarget, systemResolver } from '../../webhooks/webhook-target.ts';
import { registerPayrollProvider } from '../../../directory/payroll-providers/provider-credentials.ts';
import { secretBoxFor } from '../../../platform/shared/secret-box.ts';
import { generateSandboxDirectory, type SandboxEmployee } from '../../sandbox/sandbox-directory.ts';
import { startSandboxProvider } from '../../http/sandbox-server.ts';
import { queueReconciliationRequester } from '../../../cycle/reconciliation/reconciliation-requests.ts';
import type { Composition } from '../composition.ts';
import { openRuntime, type Runtime } from '../../../platform/runtime/runtime.ts';
import { addWorkingDays } from '../../../directory/calendars/working-days.ts';
import { exportPayouts } from '../export-commands.ts';
import { cliActor } from '../../../platform/audit/audit-service.ts';
import { createPaymentFiles } from '../../../settlement/payouts/payment-file-service.ts';
import { paymentFileName } from '../../../settlement/payouts/payout-file.ts';
import { remitAndImportStatement } from './demo-bank.ts';
import { explainThreeWay, threeWayFileName, threeWayReport, writeThreeWayCsv } from '../../../settlement/reports/three-way-report.ts';
import { runPayoutsOn } from '../../../settlement/payouts/payout-service.ts';
import { sandboxConfirmation, type PulledDeductionData } from '../../sandbox/sandbox-confirmations.ts';
import { masterNodes, producerConnection } from '../../../platform/runtime/redis-connections.ts';
import { queueNames } from '../../../platform/queue/job-catalogue.ts';
import { createQueue } from '../../../platform/queue/queues.ts';
import {
  reconciliationSummary,
  writeReconciliationCsv,
  writeReconciliationSummaryCsv,
  reconciliationFileName,
  reconciliationSummaryFileName,
} from '../../../settlement/reports/reconciliation-report.ts';
import { requestEventDispatch } from '../../webhooks/webhook-jobs.ts';
import { startWebhookReceiver } from '../../webhooks/webhook-receiver.ts';
import { createWriteStream } from 'node:fs';
import { ApiClient, inParallel } from './api-client.ts';
import {
  countEventsOf,
  countSnapshotsByStatus,
  countUndispatchedEvents,
  firstOpenLockDates,
  insertBeneficiaryAccount,
  insertCollectionAccount,
  listInstructionFiles,
  listLockedSnapshots,
  listPayrollNames,
} from './demo-repository.ts';

type Print = (line?: string) => void;

/** Where a demo runs: `deductions_demo`, prefix `deductions-demo` and `<FILES_DIR>/../demo` unless said (a test runs it apart). */
export interface DemoPlace {
  database?: string;
  queuePrefix?: string;
  filesDir?: string;
  /** Employees per payroll of the demo directory (30): the test suite runs the same story on fewer. */
  employeesPerPayroll?: number;
}

/** The demo's own database and key prefix: it is reset on every run and never touches real data. */
export function demoConfig(base: Config, place: DemoPlace = {}): Config {
  const url = new URL(base.DATABASE_URL);
  url.pathname = `/${place.database ?? 'deductions_demo'}`;
  return parseConfig({
    ...process.env,
    DATABASE_URL: url.toString(),
    QUEUE_PREFIX: place.queuePrefix ?? 'deductions-demo',
    LOG_LEVEL: process.env.DEMO_LOG_LEVEL ?? 'silent',
    FILES_DIR: place.filesDir ?? path.join(base.FILES_DIR, '..', 'demo'),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // The demo's payroll provider is a simulation on 127.0.0.1, over http.
    PROVIDER_ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_PER_SECOND: '10000',
    RATE_LIMIT_BURST: '10000',
    // The demo enrols a whole sandbox directory at once, far beyond one biller's everyday pace.
    AVAILABILITY_CHECKS_PER_MINUTE: '60000',
    AVAILABILITY_CHECKS_BURST: '10000',
    // A remittance not in by the next working day shows late before the demo's payout date.
    REMITTANCE_LATE_WORKING_DAYS: '1',
  });
}

async function resetQueues(runtime: Runtime): Promise<void> {
  // On a cluster each master answers KEYS for its own slots only.
  for (const node of masterNodes(runtime.redis)) {
    const keys = await node.keys(`${runtime.config.QUEUE_PREFIX}:*`);
    for (let i = 0; i < keys.length; i += 500) await node.del(...keys.slice(i, i + 500));
  }
}

function progressBar(label: string): SingleBar {
  return new SingleBar({ format: `  ${label.padEnd(26)} {bar} {value}/{total}`, hideCursor: true }, Presets.shades_classic);
}

interface Enrolled {
  biller: ApiClient;
  billerName: string;
  mandateId: string;
  payments: number;
  amount: number;
}

/**
 * A biller's day with one person: availability check, mandate, enablement, payment requests.
 * Returns what was set up, or why not (the sandbox has leavers, opted-out employers and so on).
 */
async function enrol(employee: SandboxEmployee, index: number, billers: Array<{ client: ApiClient; name: string }>): Promise<Enrolled | { skipped: string }> {
  const biller = billers[index % billers.length]!;
  const check = await biller.client.expect<{
    availability_check: {
      availability_status: string;
      employments: Array<{
        employment: {
          employee_id: string;
          employer: { salary_deduction_opt_in_status: string };
          payrolls: Array<{ payroll: { id: string; employment_status: string; pay_dates: unknown[] } }>;
        };
      }>;
    };
  }>('POST', '/deductions/availability/full', {
    availability_check: {
      national_registration_number: employee.national_registration_number,
      given_name: employee.given_name,
      family_name: employee.family_name,
      date_of_birth: employee.date_of_birth,
      postal_code: employee.postal_code,
      currency: 'GBP',
    },
  });
  if (check.availability_check.availability_status !== 'confirmed') return { skipped: check.availability_check.availability_status };
  const usable = check.availability_check.employments
    .map((e) => e.employment)
    .filter((e) => e.employer.salary_deduction_opt_in_status === 'opted_in')
    .flatMap((e) => e.payrolls.map((p) => ({ employeeId: e.employee_id, payroll: p.payroll })))
    .find((p) => p.payroll.employment_status === 'active' && p.payroll.pay_dates.length > 0);
  if (!usable) return { skipped: 'no usable payroll' };

  const { mandate } = await biller.client.expect<{ mandate: { id: string } }>('POST', '/mandates', {
    mandate_record: {
      employee_id: usable.employeeId,
      payroll_id: usable.payroll.id,
      consumer: {
        given_name: employee.given_name,
        family_name: employee.family_name,
        email_address: employee.email_address,
        date_of_birth: employee.date_of_birth,
        postal_code: employee.postal_code,
      },
      currency: 'GBP',
      limitations: { max_amount_per_pay_date: 50_000 },
      authorisation_source: { type: 'online', reference: `web-${index}`, authorised_at: new Date().toISOString() },
      reference: `LOAN-${String(1000 + index)}`,
    },
  });
  const enablement = await biller.client.expect<{ enablement: { status: string } }>('POST', '/deductions/enablement', {
    enablement: { employee_id: usable.employeeId, payroll_id: usable.payroll.id, mandate_id: mandate.id },
  });
  if (enablement.enablement.status !== 'enabled') return { skipped: `enablement ${enablement.enablement.status}` };

  // Amounts vary per person; every fifth takes a three-instalment schedule instead.
  const amount = 2_000 + ((index * 7919) % 23_000);
  if (index % 5 === 4) {
    await biller.client.expect('POST', '/schedules', {
      schedule_record: {
        mandate_id: mandate.id,
        amount,
        count: 3,
        interval: 'monthly',
        start_date: new Date().toISOString().slice(0, 10),
        allow_post_due_date_deduction: true,
      },
    });
    return { biller: biller.client, billerName: biller.name, mandateId: mandate.id, payments: 3, amount: amount * 3 };
  }
  await biller.client.expect('POST', '/payments', {
    payment_record: {
      mandate_id: mandate.id,
      amount,
      due_date: null,
      currency: 'GBP',
      allow_post_due_date_deduction: index % 3 === 0,
      metadata: { loan: `LOAN-${1000 + index}` },
    },
  });
  return { biller: biller.client, billerName: biller.name, mandateId: mandate.id, payments: 1, amount };
}

/**
 * `npm run demo`: a full pay-date cycle against a sandbox payroll provider, through the real API
 * over HTTP and the real BullMQ workers, on a database of its own.
 */
export async function runDemo(base: Config, { routes, startWorkers }: Composition, print: Print, place: DemoPlace = {}): Promise<void> {
  const config = demoConfig(base, place);
  const filesDir = path.resolve(config.FILES_DIR);
  const started = performance.now();
  print('Salary deductions demo');
  print(`  database ${new URL(config.DATABASE_URL).pathname.slice(1)} (reset), Redis prefix ${config.QUEUE_PREFIX}, files in ${filesDir}`);

  await recreateDatabase(config.DATABASE_URL);
  const runtime = await openRuntime(config, 'demo');
  await migrateToLatest(runtime.db);
  await resetQueues(runtime);
  rmSync(filesDir, { recursive: true, force: true });
  mkdirSync(path.join(filesDir, 'instructions'), { recursive: true });

  const today = serviceToday(new Date(), config.SERVICE_TIME_ZONE);
  const directory = generateSandboxDirectory({ seed: 'demo', employers: 6, payrollsPerEmployer: 2, employeesPerPayroll: place.employeesPerPayroll ?? 30, today });
  const sandboxCredentials = { clientId: 'demo-service', clientSecret: randomBytes(16).toString('hex') };
  const sandbox = await startSandboxProvider({ directory, ...sandboxCredentials });
  const secrets = secretBoxFor(config);
  const adapterFor = httpAdapterFactory({ secrets, urls: providerUrlPolicy(config.PROVIDER_ALLOW_PRIVATE_URLS, resolveWebhookTarget, systemResolver) });

  await insertCollectionAccount(runtime.db, { currency: 'GBP', account_number: '41234978', sort_code: '04-00-04', account_holder_name: 'Salary Deductions Collections Ltd' });
  const provider = await registerPayrollProvider(runtime.db, secrets, {
    name: 'Sandbox Payroll Ltd',
    apiBaseUrl: sandbox.url,
    apiTokenUrl: sandbox.tokenUrl,
    apiClientId: sandboxCredentials.clientId,
    apiClientSecret: sandboxCredentials.clientSecret,
    leadTimeWorkingDays: config.DEFAULT_PROVIDER_LEAD_DAYS,
  });
  const billerNames = ['Northwind Credit Union', 'Acme Lending'];
  // Where their payouts go: VocaLink's worked examples 1 and 2 (modulus 10, modulus 11), which pass the modulus check.
  const billerAccounts = [
    { sort_code: '08-99-99', account_number: '66374958' },
    { sort_code: '10-79-99', account_number: '88837491' },
  ];
  const billerCredentials: IssuedCredentials[] = [];
  for (const [i, name] of billerNames.entries()) {
    const issued = await createClient(runtime.db, { name, role: 'biller' });
    billerCredentials.push(issued);
    await insertBeneficiaryAccount(runtime.db, {
      biller_client_id: issued.clientId,
      currency: 'GBP',
      ...billerAccounts[i]!,
      account_holder_name: name,
    });
  }
  const providerCredentials = await createClient(runtime.db, { name: 'Sandbox Payroll Ltd', role: 'payroll_provider', payrollProviderId: provider.id });

  const tokens = await TokenIssuer.generate({ issuer: config.AUTH_ISSUER, audience: config.AUTH_AUDIENCE, ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS });
  // A short quiet period: the demo waits for reconciliation right after the records arrive.
  const reconciliation = queueReconciliationRequester(config, config.QUEUE_PREFIX, 500);
  const app = await buildApp({ config, db: runtime.db, redis: runtime.redis, tokens, adapterFor, reconciliation }, routes);
  const apiUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const workers = await startWorkers(runtime, { schedule: false, adapterFor });
  const webhookDispatch = createQueue(queueNames.webhookDispatch, producerConnection(config), config.QUEUE_PREFIX);
  const payDatesQueue = createQueue(queueNames.payDates, producerConnection(config), config.QUEUE_PREFIX);
  const receiver = await startWebhookReceiver();
  print(`  API on ${apiUrl}, sandbox payroll provider on ${sandbox.url}, webhook receiver on ${receiver.url}`);
  print(
    `  sandbox directory: ${directory.employers.length} employers, ${directory.payrolls.length} payrolls (weekly, monthly, four-weekly), ${directory.employees.length} people`,
  );

  try {
    print();
    print('1. Billers enrol people through the API (availability, mandate, enablement, payment requests)');
    const billers = billerCredentials.map((credentials, i) => ({ client: new ApiClient(apiUrl, credentials), name: billerNames[i]! }));
    for (const biller of billers) {
      const { webhook_endpoint: endpoint } = await biller.client.expect<{ webhook_endpoint: { secret: string } }>('POST', '/webhook-endpoints', {
        url: `${receiver.url}/hooks`,
        description: `${biller.name} integration`,
      });
      receiver.addSecret(endpoint.secret);
    }
    const bar = progressBar('people');
    bar.start(directory.employees.length, 0);
    let done = 0;
    const results = await inParallel(directory.employees, 8, async (employee, index) => {
      const result = await enrol(employee, index, billers);
      bar.update(++done);
      return result;
    });
    bar.stop();
    const enrolled = results.filter((r): r is Enrolled => !('skipped' in r));
    const skipped = new Map<string, number>();
    for (const r of results) if ('skipped' in r) skipped.set(r.skipped, (skipped.get(r.skipped) ?? 0) + 1);
    print(`  ${enrolled.length} mandates active, ${enrolled.reduce((n, e) => n + e.payments, 0)} payment requests (${pounds(enrolled.reduce((n, e) => n + e.amount, 0))})`);
    print(`  not enrolled: ${[...skipped].map(([why, n]) => `${n} ${why.replaceAll('_', ' ')}`).join(', ') || 'none'}`);

    // The availability answer names no works number, so the service holds each new employment under
    // the employee's id until payroll sends its record: the provider does, for every employee of the
    // payrolls the service now knows (PUT /payrolls/{payroll_id}/employees/{employee_id}).
    const providerClient = new ApiClient(apiUrl, providerCredentials);
    const payrollNames = new Map((await listPayrollNames(runtime.db)).map((p) => [p.id, { employer: p.employer, payroll: payrollLabel(p.employer, p.name) }]));
    const records = directory.employees.flatMap((employee) =>
      employee.employments.filter((employment) => payrollNames.has(employment.payroll_id)).map((employment) => ({ employee, employment })),
    );
    await inParallel(records, 8, async ({ employee, employment }) =>
      providerClient.expect('PUT', `/payrolls/${employment.payroll_id}/employees/${employee.id}`, {
        employee: {
          given_name: employee.given_name,
          family_name: employee.family_name,
          national_registration_number: employee.national_registration_number,
          date_of_birth: employee.date_of_birth,
          email_address: employee.email_address,
          phone_number: employee.phone_number,
          postal_code: employee.postal_code,
          payroll_reference: employment.payroll_reference,
          start_date: employment.start_date,
          end_date: employment.end_date,
          employment_status: employment.employment_status,
          contract_type: employment.contract_type,
          annualised_salary: employment.annualised_salary,
          currency: employment.currency,
        },
      }),
    );
    const worksNumbers = new Map(
      records.map(({ employee, employment }) => [`${employment.payroll_id} ${employee.id}`, { employee, reference: employment.payroll_reference }]),
    );
    print(`  the payroll provider sends its payrolls' employee records, works numbers included: ${records.length} employments on ${payrollNames.size} payrolls`);

    print();
    const locks = await firstOpenLockDates(runtime.db, today);
    const runDate =
      locks
        .map((l) => String(l.lock_date))
        .sort()
        .at(-1) ?? today;
    print(`2. The nightly run for ${runDate} (every payroll's next pay date has locked by then)`);
    const nightlyBar = progressBar('payroll pay dates');
    let barStarted = false;
    const summary = await runNightlyNow(runtime, runDate, {
      workers,
      pollMs: 100,
      onProgress: ({ done: finished, total }) => {
        if (!barStarted) nightlyBar.start(total, finished);
        barStarted = true;
        nightlyBar.update(finished);
      },
    });
    if (barStarted) nightlyBar.stop();
    print(
      `  ${summary.payrollsLocked} payroll pay dates locked, ${summary.employees} employees, ${summary.paymentsInstructed} payments instructed, ` +
        `${Object.entries(summary.totalsByCurrency)
          .map(([c, v]) => formatMoney(v, c))
          .join(', ')} asked of payroll, ${summary.failures.length} failures`,
    );

    print();
    print('3. The payroll provider pulls each locked pay date (GET /deductions/{payroll_id})');
    const snapshots = await listLockedSnapshots(runtime.db);
    for (const snapshot of snapshots) {
      const data = await providerClient.expect<{ deduction_data_response: { total_amount: number; currency: string; employee_count: number; pay_date: string } }>(
        'GET',
        `/deductions/${snapshot.payroll_id}?pay_date=${snapshot.pay_date}&pay_period=${snapshot.pay_period}`,
      );
      const response = data.deduction_data_response;
      // The API carries money as major-unit numbers (3142 is £3,142.00): read back exactly, then worded.
      print(
        `  ${snapshot.employer.padEnd(30)} ${payrollLabel(snapshot.employer, snapshot.payroll).padEnd(19)} ${response.pay_date.slice(0, 10)}  ` +
          `${String(response.employee_count).padStart(3)} employees  ${formatMoney(fromMajorUnits(response.total_amount, response.currency), response.currency).padStart(10)}`,
      );
    }
    print(`  employee pushes received by the sandbox provider: ${sandbox.pushes.length}`);
    const pulled: Array<{ snapshot: (typeof snapshots)[number]; data: PulledDeductionData }> = [];
    for (const snapshot of snapshots.filter((s) => s.employee_count > 0)) {
      const data = await providerClient.expect<PulledDeductionData>('GET', `/deductions/${snapshot.payroll_id}?pay_date=${snapshot.pay_date}`);
      pulled.push({ snapshot, data });
    }

    print();
    print('4. Instruction files (CSV: a header naming employer, payroll and pay date, one item per employee by works number, a trailer with count and total)');
    print(`  in ${path.join(filesDir, 'instructions')}:`);
    for (const file of await listInstructionFiles(runtime.db)) {
      writeFileSync(path.join(filesDir, 'instructions', file.file_name), file.content);
      const actions = ['new', 'amend', 'continue', 'stop']
        .filter((action) => (file.actions?.[action] ?? 0) > 0)
        .map((action) => `${file.actions![action]} ${action}`)
        .join(', ');
      print(`    ${file.file_name.padEnd(66)} ${String(file.item_count).padStart(3)} items${actions ? ` (${actions})` : ''}`);
    }

    print();
    print('5. Payroll runs; the provider confirms what it deducted (POST /deductions/{payroll_id}/confirmation)');
    const outcomeCounts: Record<string, number> = {};
    let corrected: { payrollId: string; payPeriod: string; employeeId: string; amount: number } | undefined;
    for (const { snapshot, data } of pulled) {
      const { body, outcomes } = sandboxConfirmation(data, snapshot.pay_period, 'demo');
      await providerClient.expect('POST', `/deductions/${snapshot.payroll_id}/confirmation`, body);
      for (const [employeeId, outcome] of Object.entries(outcomes)) {
        outcomeCounts[outcome] = (outcomeCounts[outcome] ?? 0) + 1;
        if (outcome === 'partial' && !corrected) {
          const line = data.deduction_data_response.deduction_data.find((l) => l.salary_deduction.employee_id === employeeId)!;
          corrected = { payrollId: snapshot.payroll_id, payPeriod: snapshot.pay_period, employeeId, amount: line.salary_deduction.requested_deduction_amount };
        }
      }
    }
    print(`  ${pulled.length} pay dates confirmed: ${outcomeCounts.full ?? 0} deducted in full, ${outcomeCounts.partial ?? 0} partly, ${outcomeCounts.leaver ?? 0} leavers`);
    if (corrected) {
      // Payroll re-ran one employee after a query: a higher version replaces the confirmed one.
      await providerClient.expect('POST', `/deductions/payroll/${corrected.payrollId}`, {
        pay_period: corrected.payPeriod,
        id: `correction-${corrected.employeeId.slice(0, 8)}`,
        version: 2,
        salary_deduction: { employee_id: corrected.employeeId, deduction_amount: corrected.amount, currency: 'GBP' },
        requested_payments: [],
      });
      const who = worksNumbers.get(`${corrected.payrollId} ${corrected.employeeId}`);
      const names = payrollNames.get(corrected.payrollId);
      print(
        `  one late correction: ${names ? `${names.employer} ${names.payroll}, ` : ''}works number ${who?.reference ?? corrected.employeeId} ` +
          `(${who ? `${who.employee.given_name} ${who.employee.family_name}` : 'unknown'}) pushed version 2, deducted in full (${formatMoney(fromMajorUnits(corrected.amount, 'GBP'), 'GBP')})`,
      );
    }

    print();
    print('6. Reconciliation (debounced job per payroll pay date: latest version per employee vs the request)');
    const deadline = Date.now() + 120_000;
    for (;;) {
      const statuses = await countSnapshotsByStatus(runtime.db);
      const counts = await payDatesQueue.getJobCounts('waiting', 'delayed', 'active');
      const busy = (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0);
      if ((statuses.reconciled ?? 0) >= pulled.length && busy === 0) break;
      if (Date.now() > deadline) throw new Error(`reconciliation did not finish: ${JSON.stringify(statuses)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const payDates = [...new Set(pulled.map((p) => p.snapshot.pay_date))].sort();
    const summaryRows = (await Promise.all(payDates.map((payDate) => reconciliationSummary(runtime.db, { payDate })))).flat();
    // Payroll's figure is accounted for in full: collected for payment requests, or held.
    print(
      `  ${'employer'.padEnd(30)} ${'payroll'.padEnd(19)} ${'pay date'.padEnd(10)} ${'requested'.padStart(11)} ${'reported'.padStart(11)} ${'collected'.padStart(11)} ${'held'.padStart(11)} ${'shortfall'.padStart(11)} exceptions`,
    );
    for (const row of summaryRows) {
      const held = row.held_over_deductions + row.held_unexpected_employees;
      print(
        `  ${String(row.employer).padEnd(30)} ${(payrollNames.get(row.payroll_id)?.payroll ?? '').padEnd(19)} ${row.pay_date} ${pounds(row.requested).padStart(11)} ${pounds(row.reported).padStart(11)} ` +
          `${pounds(row.collected).padStart(11)} ${pounds(held).padStart(11)} ${pounds(row.shortfall).padStart(11)} ${row.exceptions}`,
      );
    }
    mkdirSync(path.join(filesDir, 'reconciliation'), { recursive: true });
    for (const payDate of payDates) {
      const detail = path.join(filesDir, 'reconciliation', reconciliationFileName(payDate));
      const summary = path.join(filesDir, 'reconciliation', reconciliationSummaryFileName(payDate));
      await writeReconciliationCsv(runtime.db, { payDate }, createWriteStream(detail));
      await writeReconciliationSummaryCsv(runtime.db, { payDate }, createWriteStream(summary));
      print(`  ${detail}`);
      print(`  ${summary}`);
    }

    print();
    const payoutDate = addWorkingDays(payDates.at(-1)!, config.SETTLEMENT_DELAY_WORKING_DAYS + 1, regionalHolidays('england-and-wales'));
    const statementDate = addWorkingDays(payDates.at(-1)!, 1, regionalHolidays('england-and-wales'));
    print(`7. The employers remit; the bank's statement of ${statementDate} comes in (ISO 20022 camt.053) and is matched`);
    await remitAndImportStatement(runtime.db, config, {
      statementDate,
      firstPayDate: payDates[0]!,
      account: { sortCode: '04-00-04', accountNumber: '41234978' },
      filesDir,
      print,
    });

    print();
    print(`8. Payouts on ${payoutDate} (settled collections whose remittance has been received, per biller and currency)`);
    const payouts = await runPayoutsOn(runtime.db, {
      today: payoutDate,
      settlementDelayWorkingDays: config.SETTLEMENT_DELAY_WORKING_DAYS,
      funding: config.PAYOUT_FUNDING,
      concurrency: config.PAYOUT_CONCURRENCY,
    });
    const names = new Map(billerCredentials.map((c, i) => [c.clientId, billerNames[i]!]));
    for (const group of payouts.groups) {
      const detail = group.outcome === 'paid_out' ? `${pounds(group.amount)} in ${group.entries} items, reference ${group.reference}` : group.outcome;
      print(`  ${String(names.get(group.billerClientId) ?? group.billerClientId).padEnd(30)} ${detail}`);
    }
    if (payouts.funding && payouts.funding.waiting > 0) {
      print(`  held back: collections of ${payouts.funding.waiting} payroll pay date(s) whose remittance is late or short (paid when the money arrives)`);
    }
    // The day's payment file: written once and stored; both renderings are the same file (one MsgId).
    const [paymentFile] = await createPaymentFiles(runtime.db, payoutDate, { actor: cliActor('demo') });
    if (paymentFile) {
      const payoutFile = path.join(filesDir, paymentFileName(payoutDate, paymentFile.sequence, 'csv'));
      await exportPayouts(runtime.db, { date: payoutDate, file: paymentFile.sequence, out: payoutFile });
      const pain001File = path.join(filesDir, paymentFileName(payoutDate, paymentFile.sequence, 'pain.001'));
      await exportPayouts(runtime.db, { date: payoutDate, file: paymentFile.sequence, out: pain001File, format: 'pain.001' });
      print(`  payment file ${paymentFile.sequence} of ${payoutDate}, MsgId ${paymentFile.message_id}, execution date ${paymentFile.requested_execution_date}:`);
      print(`    ${payoutFile} and ${pain001File} (ISO 20022 pain.001)`);
    }

    print();
    print('9. Three-way reconciliation: requested, deducted, received, paid out (per payroll pay date)');
    print(
      `  ${'employer'.padEnd(30)} ${'payroll'.padEnd(19)} ${'pay date'.padEnd(10)} ${'requested'.padStart(11)} ${'deducted'.padStart(11)} ${'received'.padStart(11)} ${'paid out'.padStart(11)}`,
    );
    mkdirSync(path.join(filesDir, 'reconciliation'), { recursive: true });
    for (const payDate of payDates) {
      for (const row of await threeWayReport(runtime.db, payDate)) {
        print(
          `  ${row.employer.padEnd(30)} ${payrollLabel(row.employer, row.payroll).padEnd(19)} ${row.pay_date} ${pounds(row.requested).padStart(11)} ` +
            `${(row.deducted === null ? 'not yet' : pounds(row.deducted)).padStart(11)} ${pounds(row.received).padStart(11)} ${pounds(row.paid_out).padStart(11)}  ${explainThreeWay(row)}`,
        );
      }
      await writeThreeWayCsv(runtime.db, payDate, createWriteStream(path.join(filesDir, 'reconciliation', threeWayFileName(payDate))));
    }
    print(`  ${path.join(filesDir, 'reconciliation', 'three-way-*.csv')}`);

    print();
    print('10. Webhooks (signed per Standard Webhooks, verified by the receiver with the standardwebhooks package)');
    const expected = await countEventsOf(
      runtime.db,
      billerCredentials.map((c) => c.clientId),
    );
    while ((await countUndispatchedEvents(runtime.db)) > 0) {
      await requestEventDispatch(webhookDispatch);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await receiver.waitFor((r) => r.summary().verified >= expected, 60_000);
    const received = receiver.summary();
    print(`  ${received.verified} deliveries verified, ${received.rejected} rejected`);
    for (const [type, count] of Object.entries(received.byType).sort()) print(`  ${type.padEnd(26)} ${count}`);
  } finally {
    await receiver.close();
    await webhookDispatch.close();
    await payDatesQueue.close();
    await workers.close();
    await app.close();
    await reconciliation.close();
    await sandbox.close();
    await runtime.close();
  }
  print();
  print(`Done in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
}
