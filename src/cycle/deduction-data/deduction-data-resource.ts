import { DateTime } from 'luxon';
import { z } from 'zod';
import { toMajorUnits } from '../../platform/money/major-units.ts';
import { dateTimeSchema, paymentInformationSchema } from '../../directory/payroll-providers/reference-schemas.ts';
import { exampleIds } from '../../platform/shared/examples.ts';
import { requestedPaymentItem, type SnapshotRequestedPayment } from '../instructions/requested-payments.ts';
import { currencySchema, uuidSchema } from '../../platform/shared/schemas.ts';

/** The salary deduction data response, exactly as the salary-deduction interface defines it. */
export const deductionDataResponseSchema = z
  .object({
    deduction_data_response: z.object({
      payroll_id: uuidSchema,
      pay_date: dateTimeSchema,
      id: uuidSchema,
      total_amount: z.number(),
      employee_count: z.number().int(),
      currency: currencySchema,
      deduction_data: z.array(
        z.object({
          salary_deduction: z.object({
            employee_id: z.string(),
            requested_deduction_amount: z.number(),
            payment_reference: z.string(),
          }),
        }),
      ),
    }),
    requested_payments: z.array(z.object({ payment_information: paymentInformationSchema })),
  })
  .meta({
    id: 'SalaryDeductionDataResponse',
    description:
      'The deductions to make on one pay date of a payroll, as locked on its lock date, in major units (25 is GBP 25.00); ' +
      'and the payment of the deducted total to make to the collection account.',
    example: {
      deduction_data_response: {
        payroll_id: exampleIds.payroll,
        pay_date: '2026-11-27T00:00:00+00:00',
        id: exampleIds.deductionData,
        total_amount: 75,
        employee_count: 1,
        currency: 'GBP',
        deduction_data: [{ salary_deduction: { employee_id: exampleIds.employee, requested_deduction_amount: 75, payment_reference: 'SD00000042' } }],
      },
      requested_payments: [
        {
          payment_information: {
            payment_reference: 'SDR261127P00000012',
            payment_amount: 75,
            payment_account: { account_number: '41234978', sort_code: '04-00-04', account_holder_name: 'Salary Deductions Collections Ltd' },
          },
        },
      ],
    },
  });

export type DeductionDataResponse = z.infer<typeof deductionDataResponseSchema>;

/** A pay date as the interface's date-time: midnight of that date in the service time zone, with offset. */
export function payDateAsDateTime(payDate: string, timeZone: string): string {
  return DateTime.fromISO(payDate, { zone: timeZone }).startOf('day').toISO({ suppressMilliseconds: true })!;
}

export function toDeductionDataResponse(
  snapshot: { id: string; payroll_id: string; pay_date: string; total_amount: number; employee_count: number; currency: string },
  lines: ReadonlyArray<{ employee_id: string; requested_amount: number; currency: string; payment_reference: string }>,
  requested: readonly SnapshotRequestedPayment[],
  timeZone: string,
): DeductionDataResponse {
  return {
    deduction_data_response: {
      payroll_id: snapshot.payroll_id,
      pay_date: payDateAsDateTime(snapshot.pay_date, timeZone),
      id: snapshot.id,
      total_amount: toMajorUnits(snapshot.total_amount, snapshot.currency),
      employee_count: snapshot.employee_count,
      currency: snapshot.currency,
      deduction_data: lines.map((line) => ({
        salary_deduction: {
          employee_id: line.employee_id,
          requested_deduction_amount: toMajorUnits(line.requested_amount, line.currency),
          payment_reference: line.payment_reference,
        },
      })),
    },
    // One function writes these here and in each employee push (employeeRequestedPayments), so the two cannot drift.
    requested_payments: requested.map((payment) => requestedPaymentItem(payment)),
  };
}
