import type { RouteModule } from './app.ts';
import { registerPaymentRoutes } from '../payments/payment-routes.ts';

/** Every area's routes, in the order they appear in /openapi.json. */
export const routeModules: readonly RouteModule[] = [registerPaymentRoutes];
