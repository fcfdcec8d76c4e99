import type { FieldError } from '../../platform/shared/domain-errors.ts';
import { fromMajorUnits, TooManyDecimalsError } from '../../platform/money/major-units.ts';

/**
 * Minor units of an inbound major-unit amount, or the field error that explains why it cannot be
 * taken (more decimals than the currency has, or beyond what a JSON number carries exactly).
 */
export function minorUnitsOrError(major: number, currency: string, pointer: string): { minor: number; error?: undefined } | { minor?: undefined; error: FieldError } {
  try {
    return { minor: fromMajorUnits(major, currency) };
  } catch (error) {
    if (error instanceof TooManyDecimalsError || error instanceof RangeError) {
      return { error: { pointer, detail: error.message } };
    }
    throw error;
  }
}
