import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A payment_request.updated event written by a bulk statement (the nightly lock, reconciliation,
// payouts, cascades) no longer stores its whole webhook payload: three a night for each of a million
// payments, each a 19-field jsonb, were a third of those statements' WAL. It stores what a payment's
// update can change, in typed columns, and the payload is rendered when the event is read or
// delivered, the fields that never change coming from the payment request itself. What the API and
// the webhooks show is unchanged. Events with a stored payload (every other kind) stay as they are.
//
// Rendering trusts the unchanging fields not to change, so the database holds them to it: the trigger
// fires only for an UPDATE that names one of them (never for the bulk updates, which do not), and then
// refuses a new value.

const unchangingFields = [
  'id',
  'biller_client_id',
  'mandate_id',
  'schedule_id',
  'instalment_number',
  'payroll_id',
  'employee_id',
  'amount',
  'currency',
  'due_date',
  'allow_post_due_date_deduction',
  'metadata',
  'created_at',
];

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table events
      alter column payload drop not null,
      add column payment_status text,
      add column payment_status_reason text,
      add column payment_collected_amount bigint,
      add column payment_paid_out_amount bigint,
      add column payment_attempts integer,
      add column payment_target_pay_date date,
      add column payment_version integer,
      add column payment_updated_at timestamptz,
      add column payment_cancelled_at timestamptz,
      add constraint events_payload_or_payment_state check (
        payload is not null
        or (resource_type = 'payment_request' and payment_status is not null and payment_collected_amount is not null
            and payment_paid_out_amount is not null and payment_attempts is not null and payment_target_pay_date is not null
            and payment_version is not null and payment_updated_at is not null))
  `.execute(db);
  await sql`
    create function refuse_unchanging_payment_field() returns trigger language plpgsql as $$
    begin
      raise exception 'payment request %: its amount, currency, due date, metadata and the other fields set at creation never change', old.id
        using errcode = 'check_violation', detail = 'payment_request.updated events render those fields from the row';
    end
    $$
  `.execute(db);
  await sql
    .raw(
      `create trigger payment_requests_unchanging_fields before update of ${unchangingFields.join(', ')} on payment_requests
       for each row when (${unchangingFields.map((field) => `old.${field} is distinct from new.${field}`).join(' or ')})
       execute function refuse_unchanging_payment_field()`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger payment_requests_unchanging_fields on payment_requests`.execute(db);
  await sql`drop function refuse_unchanging_payment_field()`.execute(db);
  await sql`
    alter table events
      drop constraint events_payload_or_payment_state,
      drop column payment_status,
      drop column payment_status_reason,
      drop column payment_collected_amount,
      drop column payment_paid_out_amount,
      drop column payment_attempts,
      drop column payment_target_pay_date,
      drop column payment_version,
      drop column payment_updated_at,
      drop column payment_cancelled_at
  `.execute(db);
  // Events written narrow since cannot go back to a stored payload here (rendering is application
  // code); a down migration over such rows fails on this rather than leave payloads missing.
  await sql`alter table events alter column payload set not null`.execute(db);
}
