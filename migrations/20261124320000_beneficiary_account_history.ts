import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A biller's beneficiary account is where its money goes, so a change to it must leave a trace: a
// new account is a new row and the one it replaces is deactivated (deactivated_at), never
// overwritten or deleted. The trigger holds every row to that, whoever writes to the table.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table beneficiary_accounts add column deactivated_at timestamptz;
    alter table beneficiary_accounts add constraint beneficiary_accounts_deactivated_when_inactive
      check (deactivated_at is null or not active);

    create function beneficiary_accounts_keep_history() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        raise exception 'beneficiary account % is history: deactivate it instead of deleting it', old.id;
      end if;
      if (new.id, new.biller_client_id, new.currency, new.account_number, new.sort_code, new.account_holder_name, new.created_at)
           is distinct from
         (old.id, old.biller_client_id, old.currency, old.account_number, old.sort_code, old.account_holder_name, old.created_at)
         or (new.active and not old.active) then
        raise exception 'beneficiary account % is history: add a new account instead of changing this one', old.id;
      end if;
      return new;
    end
    $$;
    create trigger beneficiary_accounts_keep_history before update or delete on beneficiary_accounts
      for each row execute function beneficiary_accounts_keep_history();
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop trigger beneficiary_accounts_keep_history on beneficiary_accounts;
    drop function beneficiary_accounts_keep_history();
    alter table beneficiary_accounts drop constraint beneficiary_accounts_deactivated_when_inactive;
    alter table beneficiary_accounts drop column deactivated_at;
  `.execute(db);
}
