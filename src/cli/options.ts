import { InvalidArgumentError } from 'commander';

export function parseDateOption(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new InvalidArgumentError('expected a date as YYYY-MM-DD');
  }
  return value;
}
