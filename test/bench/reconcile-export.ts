/**
 * The reconciliation benchmark's export phase, run by test/bench/reconcile.ts in a process of its own so
 * that its peak RSS is the export's: it loads only what `deductions export reconciliation` needs to write
 * the file (configuration, the database pool and the report), not the benchmark's queues and workers.
 * `npx tsx test/bench/reconcile-export.ts --database X --pay-date D --out F` prints ms, bytes, peak RSS
 * and CPU time as JSON.
 */
import { createWriteStream, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createDatabase } from '../../src/platform/db/connection.ts';
import { writeReconciliationCsv } from '../../src/settlement/reports/reconciliation-report.ts';

const { values } = parseArgs({
  options: {
    database: { type: 'string', default: 'deductions_bench' },
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    'pay-date': { type: 'string', default: '2026-12-10' },
    out: { type: 'string', default: '/tmp/bench-reconciliation.csv' },
  },
});
const db = createDatabase(`${values.server}/${values.database}`, 2);
const started = performance.now();
await writeReconciliationCsv(db, { payDate: values['pay-date']! }, createWriteStream(values.out!));
const ms = performance.now() - started;
await db.destroy();
const cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ ms, bytes: statSync(values.out!).size, maxRssKb: process.resourceUsage().maxRSS, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
