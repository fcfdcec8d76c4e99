/**
 * The made-up identifiers the examples of /openapi.json share, so that a mandate's example names the
 * employee and payroll the availability example found, and a payment's example its mandate. Version
 * 7 UUIDs, as the database makes them.
 */
export const exampleIds = {
  biller: '0193a4f0-5b2c-7d11-8e42-3c5f7a9b1d01',
  operator: '0193a4f0-5b2c-7d11-8e42-3c5f7a9b1d02',
  payrollProviderClient: '0193a4f0-5b2c-7d11-8e42-3c5f7a9b1d03',
  payrollProvider: '0193a4f0-5b2c-7d11-8e42-3c5f7a9b1d04',
  apiKey: '0193a4f0-5b2c-7d11-8e42-3c5f7a9b1d05',
  employee: '0193a4f1-0e6d-7a42-9c13-5d7e9f1a2b03',
  payroll: '0193a4f1-0e6d-7a42-9c13-5d7e9f1a2b04',
  mandate: '0193a4f2-3a8b-7c55-8d24-6e8f0a2b3c05',
  payment: '0193a4f3-7c1d-7e66-9e35-7f9a1b3c4d06',
  secondPayment: '0193a4f3-7c1d-7e66-9e35-7f9a1b3c4d07',
  schedule: '0193a4f4-1d2e-7f77-8f46-8a0b2c4d5e08',
  payout: '0193a4f5-5e3f-7a88-9a57-9b1c3d5e6f09',
  event: '0193a4f6-9f4a-7b99-8b68-0c2d4e6f7a10',
  webhookEndpoint: '0193a4f7-2a5b-7caa-9c79-1d3e5f7a8b11',
  deductionData: '0193a4f8-6b6c-7dbb-8d8a-2e4f6a8b9c12',
  confirmation: '0193a4f9-0c7d-7ecc-9e9b-3f5a7b9c0d13',
} as const;

/** The instants of the examples: one working day in the life of the examples above. */
export const exampleInstants = {
  created: '2026-11-02T09:15:27.412Z',
  updated: '2026-11-20T02:00:04.118Z',
} as const;
