import {
  deliverWebhookJob,
  dispatchEventsJob,
  lockPayDateJob,
  nightlyTriggerJob,
  purgeIdempotencyKeysJob,
  queueNames,
  reconcilePayDateJob,
  reconcileSweepJob,
  rerunPayDateJob,
  runPayoutsJob,
} from '../src/platform/queue/job-catalogue.ts';
import type { ProcessorRegistry } from '../src/faces/workers/worker-host.ts';
import { deliverWebhookProcessor } from './deliver-webhook.ts';
import { dispatchEventsProcessor } from './dispatch-events.ts';
import { lockPayDateFailedForGood, lockPayDateProcessor } from './lock-pay-date.ts';
import { nightlyTriggerProcessor } from './nightly-trigger.ts';
import { purgeIdempotencyKeysProcessor } from './purge-idempotency-keys.ts';
import { reconcilePayDateProcessor } from './reconcile-pay-date.ts';
import { reconcileSweepProcessor } from './reconcile-sweep.ts';
import { rerunPayDateProcessor } from './rerun-pay-date.ts';
import { runPayoutsProcessor } from './run-payouts.ts';

/**
 * Every job's processor, in one place: per queue, the job name picks the processor, built once by
 * the worker host from its dependencies. The type asks for a processor for every job the catalogue
 * (src/platform/queue/job-catalogue.ts) puts on a queue. Only the composition root (bin/composition.ts)
 * imports this file; the processors themselves are imported by nothing else.
 */
export const processorRegistry: ProcessorRegistry = {
  [queueNames.nightly]: {
    processors: {
      [nightlyTriggerJob]: ({ db, queues, adapterFor, config, logger }) => nightlyTriggerProcessor(db, queues['pay-dates'], adapterFor, config.SERVICE_TIME_ZONE, logger),
      [reconcileSweepJob]: ({ db, queues, config }) => reconcileSweepProcessor(db, queues['pay-dates'], config.SERVICE_TIME_ZONE),
    },
  },
  [queueNames.payDates]: {
    processors: {
      [lockPayDateJob]: ({ db, adapterFor, amountLimits, config }) => lockPayDateProcessor(db, adapterFor, amountLimits, config),
      [rerunPayDateJob]: ({ db, adapterFor, reconciliation, amountLimits, config }) => rerunPayDateProcessor(db, adapterFor, reconciliation, amountLimits, config),
      [reconcilePayDateJob]: ({ db, config, reconciliation }) => reconcilePayDateProcessor(db, config, reconciliation),
    },
    finalFailure: { [lockPayDateJob]: ({ db }) => lockPayDateFailedForGood(db) },
  },
  [queueNames.maintenance]: {
    processors: {
      [runPayoutsJob]: ({ db, config, logger }) => runPayoutsProcessor(db, config, logger),
      [purgeIdempotencyKeysJob]: ({ db }) => purgeIdempotencyKeysProcessor(db),
    },
  },
  [queueNames.webhookDispatch]: {
    processors: { [dispatchEventsJob]: ({ db, queues, webhookSettings }) => dispatchEventsProcessor(db, queues['webhook-deliveries'], webhookSettings) },
  },
  [queueNames.webhookDeliveries]: {
    processors: { [deliverWebhookJob]: ({ db, webhookSettings, queues }) => deliverWebhookProcessor(db, webhookSettings, queues['webhook-deliveries']) },
  },
};
