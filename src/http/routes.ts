import type { RouteModule } from './app.ts';

/** Every area's routes, in the order they appear in /openapi.json. */
export const routeModules: readonly RouteModule[] = [];
