import { processorRegistry } from '../jobs/index.ts';
import { routeModules } from '../src/faces/http/routes.ts';
import { registerConsoleRoutes } from '../src/faces/console/console-routes.ts';
import { startWorkers } from '../src/faces/workers/worker-host.ts';
import type { Composition } from '../src/faces/cli/composition.ts';

/**
 * The composition root: the one module above every area. It joins the HTTP routes (src/faces/http/routes.ts)
 * and the job processors (jobs/index.ts) to the program that runs them, so that src/ never imports
 * jobs/ and the areas never import the worker host. Tests and benchmarks take their routes and
 * workers from here too, so they run what the service runs.
 */
export const composition: Composition = {
  // The console last: its pages are not API operations and stay out of /openapi.json.
  routes: [...routeModules, registerConsoleRoutes],
  startWorkers: (runtime, options) => startWorkers(runtime, processorRegistry, options),
};
