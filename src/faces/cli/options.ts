import { userInfo } from 'node:os';
import { InvalidArgumentError } from 'commander';
import { isUuid } from '../../platform/shared/schemas.ts';

export function parseDateOption(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new InvalidArgumentError('expected a date as YYYY-MM-DD');
  }
  return value;
}

/** Ids are UUIDs: a typo is named here rather than coming back as a database error. */
export function parseUuidOption(value: string): string {
  if (!isUuid(value)) throw new InvalidArgumentError('expected a UUID');
  return value.toLowerCase();
}

/** Who is at the CLI, for the audit log: --by when given, else the OS user. */
export function operatorName(by: string | undefined): string {
  return by?.trim() || userInfo().username;
}

export function parseWholeNumber(value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

/**
 * Integer minor units from an amount option typed in major units of `currency` (`--amount 31.42`
 * is £31.42), as the API's major-unit fields are read; more decimal places than the currency has,
 * a sign, a separator or zero is refused with the option named.
 */
export async function typedAmountOption(option: string, text: string, currency: string): Promise<number> {
  const { parseTypedAmount, TypedAmountError } = await import('../../platform/money/money-text.ts');
  const { InvalidError } = await import('../../platform/shared/domain-errors.ts');
  try {
    return parseTypedAmount(text, currency);
  } catch (error) {
    if (error instanceof TypedAmountError) throw new InvalidError('amount-invalid', `${option} ${text}: ${error.message}`);
    throw error;
  }
}
