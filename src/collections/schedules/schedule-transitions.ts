import type { ScheduleStatus } from '../../platform/db/tables.ts';
import { defineStatusTransitions } from '../../platform/shared/status-transitions.ts';
import { SCHEDULE_STATUSES } from './schedule-resource.ts';

// The schedule lifecycle as data. A schedule is active while an instalment may still collect, and
// leaves it once, with a reason (schedule-outcome.ts): completed when every instalment is collected
// (or paid out); errored as soon as one fails or the lock refuses one, or when none is left to collect
// and one was only partly collected; cancelled when none is left to collect and the rest were
// cancelled (with the mandate, or by the biller one by one). All are decided only for an active
// schedule, so an errored schedule stays errored even if a later push rescues its failed instalment.
//
// The biller may cancel an active or an errored schedule (an errored one may still have pending
// instalments worth stopping), never a completed one: there is nothing left to stop. completed and
// cancelled are terminal. Self-transitions are not transitions.

/** The stored status (src/platform/db/tables.ts), with the lifecycle that moves it; SCHEDULE_STATUSES names exactly its values. */
export type { ScheduleStatus };

export const SCHEDULE_LIFECYCLE = defineStatusTransitions<ScheduleStatus>({
  resource: 'A schedule',
  statuses: SCHEDULE_STATUSES,
  transitions: {
    active: ['completed', 'cancelled', 'errored'],
    errored: ['cancelled'],
    completed: [],
    cancelled: [],
  },
});
