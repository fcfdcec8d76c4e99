// Long randomised runs of the ledger model (test/cycle/reconciliation/ledger-model.ts): fresh seeds, as many
// scenarios as asked, spread over worker processes that each have their own database. Prints every
// failing seed with its shrunk counterexample and how to replay it. Not part of `npm test`, which runs
// the same property with a fixed seed.
//
//   npx tsx test/fuzz/ledger-fuzz.ts --scenarios 20000 --workers 2
//   npx tsx test/fuzz/ledger-fuzz.ts --seed 123456 --path "3:1:0"     (replay one failure)
//
// Needs PostgreSQL (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres); no Redis.
import { fork } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import fc from 'fast-check';
import { sql } from 'kysely';
import pg from 'pg';
import { createDatabase } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { ledgerProperty, operationCounts, type LedgerScenario } from '../cycle/reconciliation/ledger-model.ts';
import { createCollectionAccount } from '../support/factories.ts';
import { adminUrl, databaseUrl } from '../support/database-admin.ts';

interface Failure {
  seed: number;
  path: string;
  counterexample: string;
  error: string;
}

type WorkerMessage = { kind: 'progress'; scenarios: number } | { kind: 'failure'; failure: Failure } | { kind: 'done'; operations: Record<string, number> };

const options = new Command()
  .option('--scenarios <n>', 'scenarios to run in all', (v) => Number.parseInt(v, 10), 1_000)
  .option('--workers <n>', 'processes, each with its own database', (v) => Number.parseInt(v, 10), 2)
  .option('--batch <n>', 'scenarios per seed', (v) => Number.parseInt(v, 10), 25)
  .option('--seed <n>', 'replay this seed (with --path, one case)', (v) => Number.parseInt(v, 10))
  .option('--path <path>', 'the failing case path fast-check printed')
  .option('--worker', 'internal: run as a worker process')
  .parse()
  .opts<{ scenarios: number; workers: number; batch: number; seed?: number; path?: string; worker?: boolean }>();

/** A database of its own, migrated; a name the test suite's stale-database cleanup never matches. */
async function withFuzzDatabase<T>(work: (db: ReturnType<typeof createDatabase>) => Promise<T>): Promise<T> {
  const name = `dfuzz_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const db = createDatabase(databaseUrl(name), 4);
  // Stopped early (Ctrl-C, kill): the database goes with the process rather than staying behind.
  const dropOnSignal = (signal: NodeJS.Signals) => {
    void db
      .destroy()
      .then(() => admin.query(`drop database if exists ${name} with (force)`))
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', dropOnSignal).once('SIGTERM', dropOnSignal);
  // A worker whose parent was stopped first would otherwise die on its next progress message.
  const dropOnDisconnect = () => dropOnSignal('SIGTERM');
  if (process.send) process.once('disconnect', dropOnDisconnect);
  try {
    await migrateToLatest(db);
    await createCollectionAccount(db);
    return await work(db);
  } finally {
    process.removeListener('disconnect', dropOnDisconnect);
    await db.destroy();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

/** Every table as migrations left it, with the collection account scenarios expect. */
async function emptyTables(db: ReturnType<typeof createDatabase>): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select quote_ident(tablename) as name from pg_tables
    where schemaname = 'public' and tablename not like 'kysely_migration%'`.execute(db);
  await db.transaction().execute(async (trx) => {
    // The audit log refuses TRUNCATE by trigger (append-only); this database is the fuzz's own.
    await sql`set local session_replication_role = replica`.execute(trx);
    await sql.raw(`truncate table ${rows.map((row) => row.name).join(', ')} cascade`).execute(trx);
  });
  await createCollectionAccount(db);
  await sql`analyze`.execute(db);
}

function failureOf(details: fc.RunDetails<[LedgerScenario]>): Failure {
  return {
    seed: details.seed,
    path: details.counterexamplePath ?? '',
    counterexample: fc.stringify(details.counterexample),
    error: details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance),
  };
}

async function runWorker(total: number, batch: number): Promise<void> {
  const send = (message: WorkerMessage) => {
    if (process.connected) process.send!(message);
  };
  await withFuzzDatabase(async (db) => {
    let done = 0;
    while (done < total) {
      const numRuns = Math.min(batch, total - done);
      const details = await fc.check(ledgerProperty(db), { seed: randomInt(2 ** 31 - 1), numRuns });
      done += details.failed ? details.numRuns : numRuns;
      send({ kind: 'progress', scenarios: details.failed ? details.numRuns : numRuns });
      if (details.failed) send({ kind: 'failure', failure: failureOf(details) });
      // Scenarios build worlds of their own, so a batch's rows only slow the next batches down (a run
      // of 10,000 went from 16 to under 1 scenario a second): start each batch as fresh as the first.
      await emptyTables(db);
    }
  });
  send({ kind: 'done', operations: operationCounts });
  // The channel is held open while anything listens on it; let go of it so the worker can exit.
  if (process.connected) process.disconnect();
}

async function replay(seed: number, path: string | undefined): Promise<number> {
  return withFuzzDatabase(async (db) => {
    const details = await fc.check(ledgerProperty(db), { seed, ...(path ? { path } : {}), numRuns: path ? 1 : options.batch });
    if (!details.failed) {
      process.stdout.write(`seed ${seed}${path ? ` path ${path}` : ''}: passed\n`);
      return 0;
    }
    printFailure(failureOf(details));
    return 1;
  });
}

function printFailure(failure: Failure): void {
  process.stdout.write(
    [
      `FAILED seed ${failure.seed} path ${failure.path}`,
      `  replay: npx tsx test/fuzz/ledger-fuzz.ts --seed ${failure.seed} --path "${failure.path}"`,
      `  counterexample: ${failure.counterexample}`,
      `  ${failure.error.split('\n').join('\n  ')}`,
      '',
    ].join('\n'),
  );
}

async function runParent(): Promise<number> {
  const started = Date.now();
  const workers = Math.max(1, Math.min(options.workers, options.scenarios));
  const failures: Failure[] = [];
  const operations: Record<string, number> = {};
  let scenarios = 0;
  let lastReport = 0;
  const report = () => {
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(`${scenarios}/${options.scenarios} scenarios, ${failures.length} failing seeds, ${seconds.toFixed(0)} s\n`);
  };
  const script = fileURLToPath(import.meta.url);
  await Promise.all(
    Array.from({ length: workers }, (_, i) => {
      const share = Math.floor(options.scenarios / workers) + (i < options.scenarios % workers ? 1 : 0);
      return new Promise<void>((resolve, reject) => {
        const child = fork(script, ['--worker', '--scenarios', String(share), '--batch', String(options.batch)], { execArgv: ['--import', 'tsx'] });
        child.on('message', (message: WorkerMessage) => {
          if (message.kind === 'progress') {
            scenarios += message.scenarios;
            if (Date.now() - lastReport > 30_000) {
              lastReport = Date.now();
              report();
            }
          } else if (message.kind === 'failure') {
            failures.push(message.failure);
            printFailure(message.failure);
          } else {
            for (const [what, n] of Object.entries(message.operations)) operations[what] = (operations[what] ?? 0) + n;
          }
        });
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fuzz worker ${i} exited with ${code}`))));
      });
    }),
  );
  report();
  // Shrinking a failure runs operations too; these are every operation the workers ran.
  const ran = Object.entries(operations).sort(([a], [b]) => a.localeCompare(b));
  process.stdout.write(`\noperations run:\n${ran.map(([what, n]) => `  ${what}: ${n}`).join('\n')}\n`);
  process.stdout.write(
    `\n${scenarios} scenarios in ${((Date.now() - started) / 1000).toFixed(0)} s over ${workers} processes: ${failures.length === 0 ? 'no failures' : `${failures.length} failing seeds`}\n`,
  );
  return failures.length === 0 ? 0 : 1;
}

if (options.worker) {
  await runWorker(options.scenarios, options.batch);
} else if (options.seed !== undefined) {
  process.exitCode = await replay(options.seed, options.path);
} else {
  process.exitCode = await runParent();
}
