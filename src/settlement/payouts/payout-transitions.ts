import { defineStatusTransitions } from '../../platform/shared/status-transitions.ts';
import { PAYOUT_STATUSES } from './payout-resource.ts';

// The payout lifecycle as data. A payout is settled once, from the bank's answer: the transfer was
// made (paid) or it was not (failed, and its entries go back to the unpaid pool for the next payout).
// Both are terminal: a second answer for the same transfer is an operator's mistake, not news, and a
// failed payout is retried as a new payout rather than revived. Self-transitions are not transitions.

export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export const PAYOUT_LIFECYCLE = defineStatusTransitions<PayoutStatus>({
  resource: 'A payout',
  statuses: PAYOUT_STATUSES,
  transitions: {
    pending: ['paid', 'failed'],
    paid: [],
    failed: [],
  },
});
