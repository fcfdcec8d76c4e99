import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The collection account is where employers remit deducted money, and instruction files tell them
// so: a change to it must leave a trace, as a biller's beneficiary account does. A new account is a
// new row and the one it replaces is deactivated (deactivated_at), never overwritten or deleted.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table collection_accounts add column deactivated_at timestamptz;
    alter table collection_accounts add constraint collection_accounts_deactivated_when_inactive
      check (deactivated_at is null or not active);

    create function collection_accounts_keep_history() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        raise exception 'collection account % is history: deactivate it instead of deleting it', old.id;
      end if;
      if (new.id, new.currency, new.account_number, new.sort_code, new.account_holder_name, new.created_at)
           is distinct from
         (old.id, old.currency, old.account_number, old.sort_code, old.account_holder_name, old.created_at)
         or (new.active and not old.active) then
        raise exception 'collection account % is history: add a new account instead of changing this one', old.id;
      end if;
      return new;
    end
    $$;
    create trigger collection_accounts_keep_history before update or delete on collection_accounts
      for each row execute function collection_accounts_keep_history();
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop trigger collection_accounts_keep_history on collection_accounts;
    drop function collection_accounts_keep_history();
    alter table collection_accounts drop constraint collection_accounts_deactivated_when_inactive;
    alter table collection_accounts drop column deactivated_at;
  `.execute(db);
}
