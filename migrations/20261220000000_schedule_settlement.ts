import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Every schedule settles (issue 35). A schedule whose instalments were cancelled (with their mandate, or
// by the biller one by one) or only partly collected stayed active for ever; now it settles as soon as
// none of its instalments can collect any more, and says why:
//
// - schedules.status_reason: why a schedule left `active` (null while it is active). The reasons, with
//   the status each goes with: completed all_instalments_collected; errored instalment_failed,
//   instalment_refused (by the lock, over the per-request limit), instalments_not_collected_in_full;
//   cancelled instalments_cancelled, mandate_revoked, mandate_ended, cancelled_by_biller.
// - schedule.updated joins the event types: every change of a schedule's status writes one, its data
//   the schedule as GET /schedules/{id} shows it.
// - Schedules that had already settled get the reason they settled for: completed ones every instalment
//   collected, cancelled ones the biller's cancel (the only way one was cancelled until now), errored
//   ones a refused instalment when the lock refused one (it gave the request a status_reason), else a
//   failed one. Their status and version do not change, and no event is written: nothing happened.
// - Schedules stuck active (none of their instalments can collect any more) settle here, by the rule
//   src/collections/schedules/schedule-outcome.ts states as of this migration, each with its
//   schedule.updated event, its payload built as toScheduleResource built it then (the migration's test
//   holds the two together).

const REASONS = `'all_instalments_collected', 'instalment_failed', 'instalment_refused', 'instalments_not_collected_in_full',
  'instalments_cancelled', 'mandate_revoked', 'mandate_ended', 'cancelled_by_biller'`;

const EVENT_TYPES_BEFORE = `'mandate.created', 'mandate.updated', 'payment_request.created', 'payment_request.updated',
  'payout.created', 'employee.updated', 'webhook_endpoint.disabled', 'remittance.received', 'remittance.overdue',
  'remittance.reversed'`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table schedules add column status_reason text check (status_reason in (${sql.raw(REASONS)}));

    update schedules s set status_reason = case s.status
        when 'completed' then 'all_instalments_collected'
        when 'cancelled' then 'cancelled_by_biller'
        when 'errored' then case when exists (select 1 from payment_requests pr
                                              where pr.schedule_id = s.id and pr.status in ('failed', 'partially_collected')
                                                and pr.status_reason is not null)
                                 then 'instalment_refused' else 'instalment_failed' end
      end
    where s.status <> 'active';

    alter table events drop constraint events_type_check;
    alter table events add constraint events_type_check check (type in (${sql.raw(EVENT_TYPES_BEFORE)}, 'schedule.updated'));
  `.execute(db);

  await sql`
    with outcomes as (
      select s.id,
             case when i.instalments = 0 then null
                  when i.any_failed then 'instalment_failed'
                  when i.any_still_collecting then null
                  when i.all_collected_in_full then 'all_instalments_collected'
                  when i.any_partly_collected then 'instalments_not_collected_in_full'
                  when m.status = 'revoked' then 'mandate_revoked'
                  when m.status in ('cancelled', 'expired', 'failed') then 'mandate_ended'
                  else 'instalments_cancelled' end as reason
      from schedules s
      join mandates m on m.id = s.mandate_id
      cross join lateral (
        select count(*) as instalments,
               coalesce(bool_or(pr.status = 'failed'), false) as any_failed,
               coalesce(bool_or(pr.status in ('pending', 'instructed')), false) as any_still_collecting,
               coalesce(bool_and(pr.status in ('collected', 'paid_out')), false) as all_collected_in_full,
               coalesce(bool_or(pr.status = 'partially_collected'), false) as any_partly_collected
        from payment_requests pr where pr.schedule_id = s.id
      ) i
      where s.status = 'active'
    ),
    settled as (
      update schedules s
      set status = case when o.reason = 'all_instalments_collected' then 'completed'
                        when o.reason in ('instalment_failed', 'instalments_not_collected_in_full') then 'errored'
                        else 'cancelled' end,
          status_reason = o.reason, version = s.version + 1, updated_at = now()
      from outcomes o
      where s.id = o.id and o.reason is not null and s.status = 'active'
      returning s.*
    )
    insert into events (id, type, biller_client_id, resource_type, resource_id, created_at, payload)
    select e.event_id, 'schedule.updated', e.biller_client_id, 'schedule', e.id, now(),
           jsonb_build_object('id', e.event_id, 'type', 'schedule.updated',
             'created_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'data', jsonb_build_object(
               'id', e.id, 'mandate_id', e.mandate_id, 'status', e.status, 'status_reason', e.status_reason,
               'currency', e.currency, 'total_amount', e.total_amount, 'instalment_count', e.instalment_count,
               'metadata', e.metadata, 'version', e.version,
               'created_at', to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'updated_at', to_char(e.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'instalments', coalesce((
                 select jsonb_agg(jsonb_build_object('instalment_number', i.instalment_number, 'payment_id', i.id, 'amount', i.amount,
                                                     'due_date', i.due_date, 'target_pay_date', i.target_pay_date, 'status', i.status)
                                  order by i.instalment_number)
                 from payment_requests i where i.schedule_id = e.id), '[]'::jsonb),
               -- Empty but for one errored on a failure while others were still to come.
               'expected_payments', coalesce((
                 select jsonb_agg(jsonb_build_object('instalment_number', i.instalment_number, 'payment_id', i.id,
                                                     'pay_date', i.target_pay_date, 'amount', i.amount - i.collected_amount,
                                                     'currency', i.currency)
                                  order by i.instalment_number)
                 from payment_requests i where i.schedule_id = e.id and i.status in ('pending', 'instructed')), '[]'::jsonb)))
    from (
      -- A time-ordered (version 7) id, as the service makes event ids.
      select encode(
               int8send(((extract(epoch from clock_timestamp()) * 1000)::int8 << 16) | 28672 | floor(random() * 4096)::int8)
               || int8send((floor(random() * 2147483648)::int8 << 31) | floor(random() * 2147483648)::int8 | (-9223372036854775808)::int8),
               'hex')::uuid as event_id, s.*
      from settled s order by s.id
    ) e
    order by e.event_id
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Schedules keep the status they settled to: every status is one the schema before knew.
  await sql`
    delete from events where type = 'schedule.updated';
    alter table events drop constraint events_type_check;
    alter table events add constraint events_type_check check (type in (${sql.raw(EVENT_TYPES_BEFORE)}));
    alter table schedules drop column status_reason;
  `.execute(db);
}
