import type { RouteModule } from './app.ts';
import { registerPaymentRoutes } from './routes/payment-routes.ts';
import { registerScheduleRoutes } from './routes/schedule-routes.ts';
import { registerMandateRoutes } from './routes/mandate-routes.ts';
import { registerPayoutRoutes } from './routes/payout-routes.ts';
import { registerEventRoutes } from './routes/event-routes.ts';
import { registerAvailabilityRoutes } from './routes/availability-routes.ts';
import { registerEnablementRoutes } from './routes/enablement-routes.ts';
import { registerPayrollRoutes } from './routes/payroll-routes.ts';
import { registerDeductionDataRoutes, registerInstructionFileRoutes } from './routes/deduction-data-routes.ts';
import { registerEmployeePushRoutes } from './routes/push-routes.ts';
import { registerConfirmationRoutes } from './routes/confirmation-routes.ts';
import { registerDeductionReturnRoutes } from './routes/deduction-return-routes.ts';
import { registerReportRoutes } from './routes/report-routes.ts';
import { registerWebhookEndpointRoutes } from './routes/webhook-routes.ts';
import { registerClientRoutes } from './routes/client-routes.ts';
import { registerCalendarRoutes } from './routes/calendar-routes.ts';
import { registerAdminDirectoryRoutes } from './routes/admin-directory-routes.ts';
import { registerAdminEmployeeRoutes } from './routes/admin-employee-routes.ts';
import { registerSandboxRoutes } from './routes/sandbox-routes.ts';
import { registerRunRoutes } from './routes/run-routes.ts';
import { registerRerunRoutes } from './routes/rerun-routes.ts';
import { registerCashRoutes } from './routes/cash-routes.ts';
import { registerReportedRecordRoutes } from './routes/reported-record-routes.ts';

/** Every area's routes, in the order they appear in /openapi.json. */
export const routeModules: readonly RouteModule[] = [
  registerPaymentRoutes,
  registerScheduleRoutes,
  registerMandateRoutes,
  registerPayoutRoutes,
  registerEventRoutes,
  registerAvailabilityRoutes,
  registerEnablementRoutes,
  registerPayrollRoutes,
  registerDeductionDataRoutes,
  registerInstructionFileRoutes,
  registerEmployeePushRoutes,
  registerConfirmationRoutes,
  registerDeductionReturnRoutes,
  registerReportRoutes,
  registerWebhookEndpointRoutes,
  registerClientRoutes,
  registerCalendarRoutes,
  registerAdminDirectoryRoutes,
  registerAdminEmployeeRoutes,
  registerSandboxRoutes,
  registerRunRoutes,
  registerRerunRoutes,
  registerCashRoutes,
  registerReportedRecordRoutes,
];
