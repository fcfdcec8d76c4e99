import type {
  EmployeePushRecord,
  EmployeePushResponse,
  EnablementRequest,
  EnablementResponse,
  FullAvailabilityRequest,
  FullAvailabilityResponse,
  LightAvailabilityRequest,
  LightAvailabilityResponse,
  PayrollScheduleResponse,
} from './reference-schemas.ts';

/**
 * The five operations of the payroll provider reference interface. Payroll ids here are the
 * provider's payroll UUIDs, which are also ours (we keep the provider's UUID as the payroll id).
 * Implementations throw ProviderError (see provider-errors.ts) on failure.
 */
export interface PayrollProviderAdapter {
  lightAvailability(request: LightAvailabilityRequest): Promise<LightAvailabilityResponse>;
  fullAvailability(request: FullAvailabilityRequest): Promise<FullAvailabilityResponse>;
  enablement(request: EnablementRequest): Promise<EnablementResponse>;
  payrollInformation(payrollId: string): Promise<PayrollScheduleResponse>;
  pushEmployeeDeduction(payrollId: string, record: EmployeePushRecord): Promise<EmployeePushResponse>;
}
