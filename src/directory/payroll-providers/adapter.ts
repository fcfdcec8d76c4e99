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

/** The connection details of a provider row that an adapter needs. */
export interface ProviderConnection {
  id: string;
  api_base_url: string | null;
  api_token_url: string | null;
  api_client_id: string | null;
  api_client_secret: string | null;
}

/** Gives the adapter for a provider, or null for providers without an API (instruction files only). */
export type AdapterFactory = (provider: ProviderConnection) => PayrollProviderAdapter | null;

export const noProviderApis: AdapterFactory = () => null;
