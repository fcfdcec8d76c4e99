import { processorRegistry } from '../jobs/index.ts';
import { routeModules } from '../src/http/routes.ts';
import { registerConsoleRoutes } from '../src/console/console-routes.ts';
import { startWorkers } from '../src/workers/worker-host.ts';
import type { Composition } from '../src/cli/composition.ts';

/**
 * The composition root: the one module above every area. It joins the HTTP routes (src/http/routes.ts)
 * and the job processors (jobs/index.ts) to the program that runs them, so that src/ never imports
 * jobs/ and the areas never import the worker host. Tests and benchmarks take their routes and
 * workers from here too, so they run what the service runs.
 */
export const composition: Composition = {
  // The console last: its pages are not API operations and stay out of /openapi.json.
  routes: [...routeModules, registerConsoleRoutes],
  startWorkers: (runtime, options) => startWorkers(runtime, processorRegistry, options),
};

