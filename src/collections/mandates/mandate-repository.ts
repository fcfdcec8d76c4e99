import type { Executor } from '../../platform/db/connection.ts';
import type { EmploymentStatus, MandateStatus } from '../../platform/db/tables.ts';
import { reachableProviderIds } from '../../directory/payroll-providers/provider-reach-repository.ts';
import { knownFamilyNamesOf } from '../../directory/payrolls/directory-repository.ts';
import type { DirectoryReach } from '../../platform/shared/caller.ts';
import { CANCELLABLE_PAYMENT_STATUSES } from '../payments/payment-transitions.ts';
import { type PagingQuery } from '../../platform/shared/paging.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import type { ConsumerData, MandateWithConsumer } from './mandate-resource.ts';
import { MANDATE_LIFECYCLE } from './mandate-transitions.ts';

export interface NewMandate {
  billerClientId: string;
  employeeId: string;
  payrollId: string;
  consumer: ConsumerData;
  currency: string;
  maxAmountPerPayDate: number | null;
  maxTotalAmount: number | null;
  validFrom: string | null;
  validTo: string | null;
  authorisationSource: unknown;
  reference: string | null;
  metadata: unknown;
}

export interface MandateFilters {
  status?: MandateStatus | undefined;
  employeeId?: string | undefined;
  payrollId?: string | undefined;
}

/**
 * What a new mandate must agree with: the payroll (its currency) and, if the employee is on it, the
 * employment and who the employee is. Undefined when the payroll does not exist; employment and
 * employee fields are null when the employee is not on that payroll.
 */
/** Only a payroll the caller reaches is found (reachableProviderIds): live and sandbox, and two sandboxes, never mix. */
export async function findPayrollEmployment(db: Executor, payrollId: string, employeeId: string, reach: DirectoryReach) {
  return (
    db
      .selectFrom('payrolls')
      .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
      .leftJoin('employments', (join) => join.onRef('employments.payroll_id', '=', 'payrolls.id').on('employments.employee_id', '=', employeeId))
      // Who the employee is, for the rule that the mandate's consumer is this employee (mandate-person.ts).
      .leftJoin('employees', 'employees.id', 'employments.employee_id')
      .select([
        'payrolls.id as payroll_id',
        'payrolls.currency as payroll_currency',
        'employments.id as employment_id',
        'employments.employment_status',
        'employees.national_registration_number as employee_national_registration_number',
        'employees.date_of_birth as employee_date_of_birth',
        knownFamilyNamesOf('employees').as('employee_family_names'),
      ])
      .where('payrolls.id', '=', payrollId)
      .where('payroll_providers.id', 'in', reachableProviderIds(db, reach))
      .executeTakeFirst() as Promise<
      | {
          payroll_id: string;
          payroll_currency: string;
          employment_id: string | null;
          employment_status: EmploymentStatus | null;
          employee_national_registration_number: string | null;
          employee_date_of_birth: string | null;
          /** Every family name known for the employee (knownFamilyNamesOf); none when the employee is not on the payroll. */
          employee_family_names: string[];
        }
      | undefined
    >
  );
}

const consumerColumns = [
  'consumers.given_name as consumer_given_name',
  'consumers.family_name as consumer_family_name',
  'consumers.email_address as consumer_email_address',
  'consumers.phone_number as consumer_phone_number',
  'consumers.date_of_birth as consumer_date_of_birth',
  'consumers.postal_code as consumer_postal_code',
  'consumers.national_registration_number as consumer_national_registration_number',
  'consumers.external_reference as consumer_external_reference',
] as const;

function selectMandatesWithConsumers(db: Executor) {
  return db.selectFrom('mandates').innerJoin('consumers', 'consumers.id', 'mandates.consumer_id').selectAll('mandates').select(consumerColumns);
}

type JoinedRow = Awaited<ReturnType<ReturnType<typeof selectMandatesWithConsumers>['executeTakeFirstOrThrow']>>;

function nestConsumer(row: JoinedRow): MandateWithConsumer {
  const {
    consumer_given_name,
    consumer_family_name,
    consumer_email_address,
    consumer_phone_number,
    consumer_date_of_birth,
    consumer_postal_code,
    consumer_national_registration_number,
    consumer_external_reference,
    ...mandate
  } = row;
  return {
    ...mandate,
    consumer: {
      given_name: consumer_given_name,
      family_name: consumer_family_name,
      email_address: consumer_email_address,
      phone_number: consumer_phone_number,
      date_of_birth: consumer_date_of_birth,
      postal_code: consumer_postal_code,
      national_registration_number: consumer_national_registration_number,
      external_reference: consumer_external_reference,
    },
  };
}

/** The consumer row and its mandate, written together (the consumer exists only for this mandate). */
export async function insertMandateWithConsumer(db: Executor, mandate: NewMandate): Promise<MandateWithConsumer> {
  const consumer = await db
    .insertInto('consumers')
    .values({ biller_client_id: mandate.billerClientId, ...mandate.consumer })
    .returning('id')
    .executeTakeFirstOrThrow();
  const row = await db
    .insertInto('mandates')
    .values({
      biller_client_id: mandate.billerClientId,
      consumer_id: consumer.id,
      employee_id: mandate.employeeId,
      payroll_id: mandate.payrollId,
      status: 'pending_enablement',
      currency: mandate.currency,
      max_amount_per_pay_date: mandate.maxAmountPerPayDate,
      max_total_amount: mandate.maxTotalAmount,
      valid_from: mandate.validFrom,
      valid_to: mandate.validTo,
      authorisation_source: JSON.stringify(mandate.authorisationSource),
      reference: mandate.reference,
      metadata: mandate.metadata === null ? null : JSON.stringify(mandate.metadata),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...row, consumer: mandate.consumer };
}

/** One biller's mandate; `lock` takes the row lock a status change needs. */
export async function findMandate(db: Executor, billerClientId: string, mandateId: string, options: { rowLock?: boolean } = {}): Promise<MandateWithConsumer | undefined> {
  let query = selectMandatesWithConsumers(db).where('mandates.id', '=', mandateId).where('mandates.biller_client_id', '=', billerClientId);
  if (options.rowLock) query = query.forUpdate('mandates');
  const row = await query.executeTakeFirst();
  return row && nestConsumer(row);
}

/**
 * Mandates with their consumers by id, across billers: for code that changes mandates on the
 * service's own initiative (enablement, employee updates) and must snapshot them into events.
 */
export async function findMandatesWithConsumers(db: Executor, mandateIds: readonly string[]): Promise<MandateWithConsumer[]> {
  if (mandateIds.length === 0) return [];
  const rows = await selectMandatesWithConsumers(db).where('mandates.id', 'in', mandateIds).execute();
  return rows.map(nestConsumer);
}

export async function listMandates(db: Executor, billerClientId: string, filters: MandateFilters, paging: PagingQuery): Promise<MandateWithConsumer[]> {
  let query = selectMandatesWithConsumers(db).where('mandates.biller_client_id', '=', billerClientId);
  if (filters.status) query = query.where('mandates.status', '=', filters.status);
  if (filters.employeeId) query = query.where('mandates.employee_id', '=', filters.employeeId);
  if (filters.payrollId) query = query.where('mandates.payroll_id', '=', filters.payrollId);
  const rows = await applyPaging(query, 'mandates', paging).execute();
  return rows.map(nestConsumer);
}

/** Marks a (locked) mandate revoked; the caller has checked the transition. */
export async function markMandateRevoked(db: Executor, mandateId: string) {
  return db
    .updateTable('mandates')
    .set((eb) => ({
      status: 'revoked',
      revoked_at: eb.fn<Date>('now'),
      updated_at: eb.fn<Date>('now'),
      version: eb('version', '+', 1),
    }))
    .where('id', '=', mandateId)
    .where('status', 'in', MANDATE_LIFECYCLE.fromStatuses('revoked'))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Cancels every pending payment request of a just-revoked mandate in one statement, stamping them
 * with the revocation instant so the cascade can be told apart from earlier cancellations later.
 */
export async function cancelPendingPaymentsOfRevokedMandate(db: Executor, mandateId: string) {
  return db
    .updateTable('payment_requests')
    .set((eb) => ({
      status: 'cancelled',
      cancelled_at: revokedAtOf(db, mandateId),
      updated_at: eb.fn<Date>('now'),
      version: eb('version', '+', 1),
    }))
    .where('mandate_id', '=', mandateId)
    .where('status', 'in', CANCELLABLE_PAYMENT_STATUSES)
    .returningAll()
    .execute();
}

/** The payment requests a mandate's revocation cancelled, oldest first. */
export async function findPaymentIdsCancelledByRevocation(db: Executor, mandateId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('payment_requests')
    .select('id')
    .where('mandate_id', '=', mandateId)
    .where('status', '=', 'cancelled')
    .where('cancelled_at', '=', revokedAtOf(db, mandateId))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

// Compared in SQL at full (microsecond) precision; a JS Date would keep only milliseconds.
function revokedAtOf(db: Executor, mandateId: string) {
  return db.selectFrom('mandates').select('revoked_at').where('id', '=', mandateId);
}
