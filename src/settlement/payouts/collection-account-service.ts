import type { Selectable } from 'kysely';
import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { CollectionAccountsTable } from '../../platform/db/tables.ts';
import { InvalidError } from '../../platform/shared/domain-errors.ts';
import { invalidInput } from '../../platform/shared/invalid-input.ts';
import { currencySchema } from '../../platform/shared/schemas.ts';
import { accountAuditSummary, bankAccountObject, type UkBankAccount } from './bank-account-details.ts';
import { addCollectionAccount, deactivateCollectionAccount, listCollectionAccounts, rowLockActiveCollectionAccount } from './collection-account-repository.ts';

export type CollectionAccountRow = Selectable<CollectionAccountsTable>;

export const newCollectionAccountSchema = bankAccountObject({ currency: currencySchema });

export type NewCollectionAccount = UkBankAccount & { currency: string };

/**
 * Where employers remit deductions in a currency from now on. The account it replaces is
 * deactivated, never overwritten, so every instruction file's account stays traceable; the change is
 * audited with who made it and why. Locks from now on name the new account.
 */
export async function replaceCollectionAccount(
  trx: Executor,
  details: NewCollectionAccount,
  action: { actor: Actor; reason: string },
): Promise<{ previous: CollectionAccountRow | undefined; current: CollectionAccountRow }> {
  const parsed = newCollectionAccountSchema.safeParse(details);
  if (!parsed.success) throw invalidInput(parsed.error, 'invalid-bank-account');
  const reason = action.reason.trim();
  if (reason === '') {
    throw new InvalidError('reason-required', 'Changing where employers remit needs a reason', { errors: [{ pointer: '/reason', detail: 'is required' }] });
  }
  const { currency, ...account } = parsed.data;
  const previous = await rowLockActiveCollectionAccount(trx, currency);
  const retired = previous ? await deactivateCollectionAccount(trx, previous.id) : undefined;
  const current = await addCollectionAccount(trx, currency, account);
  await recordAction(trx, {
    actor: action.actor,
    action: 'collection_account.replaced',
    resourceType: 'collection_account',
    resourceId: currency,
    reason,
    before: retired ? accountAuditSummary(retired) : null,
    after: accountAuditSummary(current),
  });
  return { previous: retired, current };
}

export async function collectionAccountHistory(db: Executor, filters: { currency?: string | undefined }): Promise<CollectionAccountRow[]> {
  return listCollectionAccounts(db, filters);
}
