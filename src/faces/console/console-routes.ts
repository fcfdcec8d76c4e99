import type { RouteModule } from '../http/app.ts';
import { outageReporter } from '../http/dependency-errors.ts';
import { consolePageModules } from './console-pages.ts';
import { registerConsole } from './console-plugin.ts';

/**
 * The console as one more route module of the API process, mounted under /console in its own
 * encapsulated context (its own cookies, CSRF, error pages and content policy).
 */
export const registerConsoleRoutes: RouteModule = (app, deps) => {
  app.register(registerConsole(consolePageModules), {
    prefix: '/console',
    config: deps.config,
    db: deps.db,
    ...(deps.readDb ? { readDb: deps.readDb } : {}),
    redis: deps.redis,
    tokens: deps.tokens,
    // Pages refused for an outage tell the process's health monitor, as the API's requests do.
    outages: outageReporter(deps.health),
  });
};
