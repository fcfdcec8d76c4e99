import { describe, expect, it } from 'vitest';
import { importSpecifiers, importsOf, type SourceFile } from './import-graph.ts';
import {
  allViolations,
  areasImportingHttp,
  bullmqOutsideQueueEdges,
  districtsImportingUpward,
  fileLoops,
  filesOutsideDistricts,
  folderLoops,
  processorsThatAreNotLeaves,
  sqlOutsideRepositories,
  srcImportingJobs,
  talksSql,
} from './import-rules.ts';

/** A made-up file: its imports are read from its text, as for the real tree. */
function file(path: string, text: string): SourceFile {
  return { path, text, ...importsOf(path, text) };
}

describe('the import graph', () => {
  it('reads static, type-only, re-exported and dynamic imports, resolved from the importing file', () => {
    const { imports, packages } = importsOf(
      'src/collections/payments/payment-service.ts',
      [
        "import { z } from 'zod';",
        "import type { Caller } from '../../platform/shared/caller.ts';",
        "import {\n  a,\n  b,\n} from './payment-repository.ts';",
        "export { c } from '../../cycle/ledger/ledger-postings.ts';",
        "const lazy = await import('../../../jobs/index.ts');",
        "import './side-effect.ts';",
      ].join('\n'),
    );
    expect(imports).toEqual([
      'src/platform/shared/caller.ts',
      'src/collections/payments/payment-repository.ts',
      'src/cycle/ledger/ledger-postings.ts',
      'jobs/index.ts',
      'src/collections/payments/side-effect.ts',
    ]);
    expect(packages).toEqual(['zod']);
  });

  it('leaves type-only imports out when asked for what runs', () => {
    const text = "import type { Database } from '../db/connection.ts';\nimport { migrateToLatest } from '../db/migrator.ts';";
    expect(importSpecifiers(text)).toEqual(['../db/connection.ts', '../db/migrator.ts']);
    expect(importSpecifiers(text, { valuesOnly: true })).toEqual(['../db/migrator.ts']);
    expect(importSpecifiers("import type { Redis } from 'ioredis';", { valuesOnly: true })).toEqual([]);
  });
});

describe('each layout rule fails on a graph that breaks it', () => {
  it('an area importing src/faces/http', () => {
    const files = [file('src/collections/payments/payment-service.ts', "import { conflict } from '../../faces/http/problem.ts';")];
    expect(areasImportingHttp(files)).toEqual([
      { rule: 'area-imports-http', file: 'src/collections/payments/payment-service.ts', detail: 'imports src/faces/http/problem.ts' },
    ]);
    // The edges themselves may.
    expect(areasImportingHttp([file('src/faces/cli/main.ts', "import { x } from '../http/app.ts';")])).toEqual([]);
    expect(areasImportingHttp([file('src/faces/http/routes/payment-routes.ts', "import { x } from '../route.ts';")])).toEqual([]);
  });

  it('src importing jobs/', () => {
    const files = [file('src/faces/workers/worker-host.ts', "import { lockPayDateProcessor } from '../../../jobs/lock-pay-date.ts';")];
    expect(srcImportingJobs(files)).toHaveLength(1);
    expect(srcImportingJobs([file('bin/composition.ts', "import { processors } from '../jobs/index.ts';")])).toEqual([]);
  });

  it('a processor imported by anything but the registry and tests', () => {
    expect(processorsThatAreNotLeaves([file('jobs/run-payouts.ts', "import { x } from './lock-pay-date.ts';")])).toHaveLength(1);
    expect(processorsThatAreNotLeaves([file('bin/composition.ts', "import { x } from '../jobs/lock-pay-date.ts';")])).toHaveLength(1);
    expect(processorsThatAreNotLeaves([file('jobs/index.ts', "import { x } from './lock-pay-date.ts';")])).toEqual([]);
    expect(processorsThatAreNotLeaves([file('test/jobs/x.test.ts', "import { x } from '../../jobs/lock-pay-date.ts';")])).toEqual([]);
  });

  it('SQL outside a repository', () => {
    for (const text of [
      "await db.selectFrom('payment_requests').selectAll().execute();",
      "await trx.updateTable('payouts').set({ status: 'paid' }).execute();",
      'await sql`select 1`.execute(db);',
      'const rows = sql<{ id: string }>`select id from events`;',
      "await client.query('select 1');",
      "db.insertInto('events')",
    ]) {
      expect(talksSql(text), text).toBe(true);
      expect(sqlOutsideRepositories([file('src/collections/payments/payment-service.ts', text)])).toHaveLength(1);
      expect(sqlOutsideRepositories([file('jobs/run-payouts.ts', text)])).toHaveLength(1);
      expect(sqlOutsideRepositories([file('src/collections/payments/payment-repository.ts', text)])).toEqual([]);
      expect(sqlOutsideRepositories([file('src/platform/db/connection.ts', text)])).toEqual([]);
    }
    expect(talksSql("import type { Kysely } from 'kysely';\nconst sqlState = '23505';")).toBe(false);
  });

  it('a folder loop, however long', () => {
    const files = [
      file('src/cycle/a/x.ts', "import { y } from '../b/y.ts';"),
      file('src/cycle/b/y.ts', "import { z } from '../c/z.ts';"),
      file('src/cycle/c/z.ts', "import { x } from '../a/x.ts';"),
      file('src/cycle/d/w.ts', "import { x } from '../a/x.ts';"),
    ];
    expect(folderLoops(files)).toEqual([{ rule: 'folder-loop', file: 'src/{cycle/a,cycle/b,cycle/c}', detail: 'cycle/a, cycle/b, cycle/c import each other' }]);
    expect(folderLoops(files.slice(0, 2))).toEqual([]);
  });

  it('a file loop inside an area, even through a type-only import', () => {
    const files = [
      file('src/settlement/reports/three-way-report.ts', "import { findRows } from './three-way-report-repository.ts';"),
      file('src/settlement/reports/three-way-report-repository.ts', "import type { Row } from './three-way-report.ts';"),
    ];
    expect(fileLoops(files)).toEqual([
      {
        rule: 'file-loop',
        file: 'src/settlement/reports/three-way-report-repository.ts',
        detail: 'src/settlement/reports/three-way-report-repository.ts, src/settlement/reports/three-way-report.ts import each other',
      },
    ]);
    expect(fileLoops(files.slice(0, 1))).toEqual([]);
  });

  it('a file outside the districts', () => {
    expect(filesOutsideDistricts([file('src/payments/payment-service.ts', '')])).toHaveLength(1);
    expect(filesOutsideDistricts([file('src/collections/payment-service.ts', '')])).toHaveLength(1);
    expect(filesOutsideDistricts([file('src/collections/payments/payment-service.ts', '')])).toEqual([]);
  });

  it('an arrow back up: a district importing one after it', () => {
    const upward = [file('src/directory/payrolls/employment-change.ts', "import { x } from '../../collections/mandates/mandate-repository.ts';")];
    expect(districtsImportingUpward(upward)).toEqual([
      {
        rule: 'district-upward',
        file: 'src/directory/payrolls/employment-change.ts',
        detail: 'imports src/collections/mandates/mandate-repository.ts (collections comes after directory)',
      },
    ]);
    const downward = [file('src/collections/mandates/mandate-service.ts', "import { x } from '../../directory/calendars/lock-date.ts';")];
    expect(districtsImportingUpward(downward)).toEqual([]);
  });

  it('BullMQ imported outside the queue platform, the workers, the console, jobs/ and tests', () => {
    // Built rather than written out: test/unit-project.test.ts reads this file's text for what it imports.
    const bullmq = 'bullmq';
    const producer = file('src/cycle/nightly/nightly-service.ts', `import { Job, type Queue } from '${bullmq}';`);
    expect(bullmqOutsideQueueEdges([producer])).toEqual([{ rule: 'bullmq-outside-queue-edges', file: 'src/cycle/nightly/nightly-service.ts', detail: 'imports bullmq' }]);
    // A type-only import counts: areas hold queues by the contract's JobQueue type.
    expect(bullmqOutsideQueueEdges([file('src/platform/metrics/service-metrics.ts', "import type { Queue } from 'bullmq';")])).toHaveLength(1);
    expect(bullmqOutsideQueueEdges([file('bin/composition.ts', `const { Queue } = await import('${bullmq}');`)])).toHaveLength(1);
    for (const allowed of [
      'src/platform/queue/queues.ts',
      'src/faces/workers/worker-host.ts',
      'src/faces/console/console-queues.ts',
      'jobs/lock-pay-date.ts',
      'test/faces/workers/worker-host.test.ts',
    ]) {
      expect(bullmqOutsideQueueEdges([file(allowed, `import { Queue } from '${bullmq}';`)]), allowed).toEqual([]);
    }
    // Through the contract, no BullMQ.
    expect(bullmqOutsideQueueEdges([file('src/cycle/nightly/nightly-service.ts', "import { enqueueJobs } from '../../platform/queue/job-contract.ts';")])).toEqual([]);
  });

  it('a clean graph has no violations', () => {
    const files = [
      file('src/faces/http/routes/payment-routes.ts', "import { createPayment } from '../../../collections/payments/payment-service.ts';"),
      file(
        'src/collections/payments/payment-service.ts',
        "import { insertPayment } from './payment-repository.ts';\nimport { NotFound } from '../../platform/shared/domain-errors.ts';",
      ),
      file('src/collections/payments/payment-repository.ts', "export const insertPayment = (db) => db.insertInto('payment_requests');"),
      file('jobs/index.ts', "import { runPayoutsProcessor } from './run-payouts.ts';"),
      file('jobs/run-payouts.ts', "import { runPayouts } from '../src/settlement/payouts/payout-service.ts';"),
      file('bin/composition.ts', "import { processors } from '../jobs/index.ts';"),
    ];
    expect(allViolations(files)).toEqual([]);
  });
});
