import type { ConsolePageModule } from './console-plugin.ts';
import { registerCashPages } from './pages/cash-pages.ts';
import { registerFailedJobsPage } from './pages/failed-jobs-page.ts';
import { registerOverviewPage } from './pages/overview-page.ts';
import { registerPayoutPages } from './pages/payout-pages.ts';
import { registerReconciliationPages } from './pages/reconciliation-pages.ts';
import { registerPayDatePage } from './pages/pay-date-page.ts';
import { registerDeductionReturnPages } from './pages/deduction-return-pages.ts';
import { registerRunsPages } from './pages/runs-pages.ts';
import { registerNightlyRetryAction } from './pages/nightly-retry-action.ts';
import { registerQueuesBoard } from './pages/queues-board.ts';
import { registerSignInPages } from './pages/sign-in-pages.ts';
import { registerThreeWayPage } from './pages/three-way-page.ts';
import { registerWebhookPages } from './pages/webhook-pages.ts';

/** Every console page module, registered under /console in this order. */
export const consolePageModules: readonly ConsolePageModule[] = [
  registerSignInPages,
  registerOverviewPage,
  registerReconciliationPages,
  registerCashPages,
  registerThreeWayPage,
  registerPayoutPages,
  registerRunsPages,
  registerNightlyRetryAction,
  registerPayDatePage,
  registerDeductionReturnPages,
  registerFailedJobsPage,
  registerWebhookPages,
  registerQueuesBoard,
];
