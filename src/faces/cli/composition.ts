import type { RouteModule } from '../http/app.ts';
import type { StartWorkers } from '../workers/worker-host.ts';

/**
 * What the entry point (bin/composition.ts) hands the CLI: the API's routes and a way to start the
 * workers with every job's processor. It is put together outside src/, so src/ never imports the
 * processors (jobs/) and areas never reach up for the routes or the worker host's processors.
 */
export interface Composition {
  /** Every area's routes, in the order they appear in /openapi.json. */
  routes: readonly RouteModule[];
  startWorkers: StartWorkers;
}

/** How the commands that run the API or the workers get the composition: loaded when first asked for. */
export type LoadComposition = () => Promise<Composition>;
