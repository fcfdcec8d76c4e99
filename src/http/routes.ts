import type { RouteModule } from './app.ts';
import { registerPaymentRoutes } from '../payments/payment-routes.ts';
import { registerScheduleRoutes } from '../schedules/schedule-routes.ts';
import { registerMandateRoutes } from '../mandates/mandate-routes.ts';
import { registerPayoutRoutes } from '../payouts/payout-routes.ts';
import { registerEventRoutes } from '../events/event-routes.ts';
import { registerAvailabilityRoutes } from '../availability/availability-routes.ts';
import { registerEnablementRoutes } from '../enablement/enablement-routes.ts';
import { registerPayrollRoutes } from '../payrolls/payroll-routes.ts';
import { registerDeductionDataRoutes, registerInstructionFileRoutes } from '../deductions/deduction-data-routes.ts';
import { registerEmployeePushRoutes } from '../deductions-in/push-routes.ts';
import { registerConfirmationRoutes } from '../deductions-in/confirmation-routes.ts';
import { registerReportRoutes } from '../reports/report-routes.ts';
import { registerWebhookEndpointRoutes } from '../webhooks/webhook-routes.ts';
import { registerClientRoutes } from '../auth/client-routes.ts';

/** Every area's routes, in the order they appear in /openapi.json. */
export const routeModules: readonly RouteModule[] = [registerPaymentRoutes,
  registerScheduleRoutes, registerMandateRoutes, registerPayoutRoutes, registerEventRoutes,
  registerAvailabilityRoutes, registerEnablementRoutes, registerPayrollRoutes, registerDeductionDataRoutes,
  registerInstructionFileRoutes, registerEmployeePushRoutes, registerConfirmationRoutes, registerReportRoutes,
  registerWebhookEndpointRoutes, registerClientRoutes];
