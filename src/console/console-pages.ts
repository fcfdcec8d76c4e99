import type { ConsolePageModule } from './console-plugin.ts';
import { registerOverviewPage } from './pages/overview-page.ts';
import { registerQueuesBoard } from './pages/queues-board.ts';
import { registerSignInPages } from './pages/sign-in-pages.ts';
import { registerWebhookPages } from './pages/webhook-pages.ts';

/** Every console page module, registered under /console in this order. */
export const consolePageModules: readonly ConsolePageModule[] = [registerSignInPages, registerOverviewPage, registerWebhookPages, registerQueuesBoard];
