import { createHash } from 'node:crypto';

// A record's content hash decides whether a same-version re-send is a retry (equal) or a conflict
// (different). It is taken over money in integer minor units and a canonical JSON (keys sorted,
// ids lower-cased), so 125.5 and 125.50, or a reordered object, are the same content.

export interface StoredRequestedPayment {
  payment_information: {
    payment_reference: string;
    /** Integer minor units of the record's currency. */
    payment_amount: number;
    payment_account: { account_number: string; sort_code: string; account_holder_name: string };
  };
}

export interface DeductionContent {
  employeeId: string;
  /** Integer minor units. */
  deductionAmount: number;
  currency: string;
  leaver: boolean;
  requestedPayments: readonly StoredRequestedPayment[];
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 (hex) of the canonical content of one employee's deduction record. */
export function deductionContentHash(content: DeductionContent): string {
  const canonical = canonicalJson({
    salary_deduction: {
      employee_id: content.employeeId.toLowerCase(),
      deduction_amount: content.deductionAmount,
      currency: content.currency,
    },
    leaver: content.leaver,
    requested_payments: content.requestedPayments,
  });
  return createHash('sha256').update(canonical).digest('hex');
}
