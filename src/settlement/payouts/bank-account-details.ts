import { z } from 'zod';
import { paymentFileNameProblem } from './payment-text.ts';
import { vocalinkModulusCheck } from './uk-modulus-check.ts';

/**
 * A UK bank account as Bacs pays into it: where employers remit deductions (the collection account)
 * and where billers are paid (beneficiary accounts) follow the same rule, so it lives here once.
 */
export interface UkBankAccount {
  sort_code: string;
  account_number: string;
  account_holder_name: string;
}

export interface BankAccountViolation {
  field: keyof UkBankAccount;
  detail: string;
}

export const ACCOUNT_HOLDER_NAME_MAX_LENGTH = 140;

/** An account number in an audit record: enough to tell two accounts apart, not enough to pay into. */
export function maskedAccountNumber(accountNumber: string): string {
  return `****${accountNumber.slice(-4)}`;
}

/** What the audit log keeps of a collection or beneficiary account. */
export function accountAuditSummary(account: UkBankAccount & { id: string; currency: string }) {
  return {
    account_id: account.id,
    currency: account.currency,
    sort_code: account.sort_code,
    account_number: maskedAccountNumber(account.account_number),
    account_holder_name: account.account_holder_name,
  };
}

/**
 * What is wrong with an account's details, field by field (none: the account is acceptable), checked
 * when the account is set up so that a payout never bounces on a mistyped number and no name can block
 * a payment file later. The sort code is written NN-NN-NN, the account number is exactly 8 digits
 * (shorter numbers are padded by the bank that issued them, never by us), and the pair passes VocaLink's
 * modulus check (a sort code the check has no weights for is presumed valid, as VocaLink says). The
 * holder's name is not blank, and written in the payment files' characters (payment-text.ts) it keeps
 * at least two letters or digits and fits a pain.001 name.
 */
export function bankAccountViolations(account: UkBankAccount): BankAccountViolation[] {
  const violations: BankAccountViolation[] = [];
  const sortCodeWritten = /^[0-9]{2}-[0-9]{2}-[0-9]{2}$/.test(account.sort_code);
  const accountNumberWritten = /^[0-9]{8}$/.test(account.account_number);
  if (!sortCodeWritten) {
    violations.push({ field: 'sort_code', detail: 'must be a sort code written NN-NN-NN, e.g. 60-16-13' });
  }
  if (!accountNumberWritten) {
    violations.push({ field: 'account_number', detail: 'must be exactly 8 digits' });
  } else if (sortCodeWritten && vocalinkModulusCheck(account.sort_code.replaceAll('-', ''), account.account_number) === 'fail') {
    violations.push({
      field: 'account_number',
      detail: `fails the Vocalink modulus check for sort code ${account.sort_code}: check both for a mistyped or swapped digit`,
    });
  }
  const holder = account.account_holder_name.trim();
  if (holder === '') {
    violations.push({ field: 'account_holder_name', detail: 'must not be blank' });
  } else if (holder.length > ACCOUNT_HOLDER_NAME_MAX_LENGTH) {
    violations.push({ field: 'account_holder_name', detail: `must be at most ${ACCOUNT_HOLDER_NAME_MAX_LENGTH} characters` });
  } else {
    const problem = paymentFileNameProblem(holder);
    if (problem !== null) violations.push({ field: 'account_holder_name', detail: problem });
  }
  return violations;
}

const bankAccountFields = {
  sort_code: z.string().meta({ description: 'Sort code, NN-NN-NN', example: '60-16-13' }),
  account_number: z.string().meta({ description: 'Account number, exactly 8 digits; with the sort code it must pass the Vocalink modulus check', example: '31926819' }),
  account_holder_name: z.string().trim().meta({
    description:
      "The name the account is held in (at most 140 characters); written in the payment files' characters it must keep at least 2 letters or digits and fit the 70 of a pain.001 name",
    example: 'Acme Lending Ltd',
  }),
};

/**
 * A strict object of the account's fields plus `extra`, checked by bankAccountViolations: each
 * violation is an issue at its field, so an API answers 422 with a pointer to it.
 */
export function bankAccountObject<Extra extends z.ZodRawShape>(extra: Extra) {
  return z.strictObject({ ...bankAccountFields, ...extra }).superRefine((account, ctx) => {
    for (const violation of bankAccountViolations(account as UkBankAccount)) {
      ctx.addIssue({ code: 'custom', path: [violation.field], message: violation.detail });
    }
  });
}
