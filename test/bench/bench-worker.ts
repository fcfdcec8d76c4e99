/**
 * One worker process for the scale-out benchmark (scale-out.ts): the service's workers as
 * `deductions work` starts them, without the nightly scheduler (the benchmark triggers its own run).
 * Configured by the environment like the service; PAY_DATE_CONCURRENCY sets its share of the
 * pay-date jobs. Says "ready" on stdout once its workers listen, and closes them gracefully on SIGTERM.
 */
import { composition } from '../../bin/composition.ts';
import { loadConfig } from '../../src/platform/config/config.ts';
import { openRuntime } from '../../src/platform/runtime/runtime.ts';

const runtime = await openRuntime(loadConfig(), 'bench-worker');
const host = await composition.startWorkers(runtime, { schedule: false, payDateConcurrency: runtime.config.PAY_DATE_CONCURRENCY });
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void host
    .close()
    .then(() => runtime.close())
    .then(() => process.exit(0));
});
