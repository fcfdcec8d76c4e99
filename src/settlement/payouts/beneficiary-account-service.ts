import type { Selectable } from 'kysely';
import type { z } from 'zod';
import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { BeneficiaryAccountsTable } from '../../platform/db/tables.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { invalidInput } from '../../platform/shared/invalid-input.ts';
import { currencySchema, isUuid } from '../../platform/shared/schemas.ts';
import { accountAuditSummary, bankAccountObject } from './bank-account-details.ts';
import {
  deactivateBeneficiaryAccount,
  findBillerClient,
  insertBeneficiaryAccount,
  listBeneficiaryAccounts,
  rowLockActiveBeneficiaryAccount,
} from './beneficiary-account-repository.ts';

export type BeneficiaryAccountRow = Selectable<BeneficiaryAccountsTable>;

export const newBeneficiaryAccountSchema = bankAccountObject({ currency: currencySchema });

export type NewBeneficiaryAccount = z.infer<typeof newBeneficiaryAccountSchema>;

export interface AccountReplacement {
  previous: BeneficiaryAccountRow | undefined;
  current: BeneficiaryAccountRow;
}

/**
 * Where a biller's money goes from now on, in one currency. The account it replaces is deactivated,
 * never overwritten, so every payout's destination stays traceable; the change is audited with who
 * made it and why. Payouts already made keep the account they were made to (copied onto the payout).
 */
export async function replaceBeneficiaryAccount(
  trx: Executor,
  billerClientId: string,
  details: NewBeneficiaryAccount,
  action: { actor: Actor; reason: string },
): Promise<AccountReplacement> {
  const parsed = newBeneficiaryAccountSchema.safeParse(details);
  if (!parsed.success) throw invalidInput(parsed.error, 'invalid-bank-account');
  const reason = action.reason.trim();
  if (reason === '') {
    throw new InvalidError('reason-required', 'Changing where a biller is paid needs a reason', { errors: [{ pointer: '/reason', detail: 'is required' }] });
  }
  const biller = isUuid(billerClientId) ? await findBillerClient(trx, billerClientId) : undefined;
  if (!biller) throw new NotFoundError(`Client ${billerClientId}`);
  if (biller.role !== 'biller') throw new ConflictError('not-a-biller', `Client ${billerClientId} is a ${biller.role}; only billers are paid out`);

  const { currency, ...account } = parsed.data;
  const previous = await rowLockActiveBeneficiaryAccount(trx, billerClientId, currency);
  const retired = previous ? await deactivateBeneficiaryAccount(trx, previous.id) : undefined;
  const current = await insertBeneficiaryAccount(trx, billerClientId, currency, account);
  await recordAction(trx, {
    actor: action.actor,
    action: 'beneficiary_account.replaced',
    resourceType: 'biller',
    resourceId: billerClientId,
    reason,
    before: retired ? accountAuditSummary(retired) : null,
    after: accountAuditSummary(current),
  });
  return { previous: retired, current };
}

/** Every account a biller has had, per currency newest first; a client that is no biller has none to show. */
export async function beneficiaryAccountHistory(db: Executor, billerClientId: string): Promise<BeneficiaryAccountRow[]> {
  const biller = isUuid(billerClientId) ? await findBillerClient(db, billerClientId) : undefined;
  if (!biller || biller.role !== 'biller') throw new NotFoundError(`Biller ${billerClientId}`);
  return listBeneficiaryAccounts(db, billerClientId);
}
