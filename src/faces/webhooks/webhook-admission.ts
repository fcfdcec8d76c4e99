import { WEBHOOK_QUEUED_PER_BILLER_DEFAULT } from '../../platform/config/config.ts';
import type { Database } from '../../platform/db/connection.ts';
import { admittedDeliveryJobId } from '../../platform/queue/job-catalogue.ts';
import {
  abandonBacklogOfRemovedEndpoints,
  claimDeliveryForJob,
  countAdmitted,
  listBillersWithDueBacklog,
  advisoryLockBillerAdmissions,
  markAdmitted,
  nextDueInBacklog,
  pickDueDeliveries,
  releaseDelivery,
} from './webhook-repository.ts';

/**
 * Admission: how a biller's backlog stays out of other billers' way.
 *
 * The delivery queue is one FIFO line shared by every biller. A delivery waits in the database (its
 * biller's backlog) until it is admitted: handed to one queue job, which alone may attempt it. Each
 * biller has at most `perBiller` deliveries admitted at once (WEBHOOK_QUEUED_PER_BILLER, 8, across all
 * worker processes), so the queue holds at most that many of any one biller's, however large its
 * backlog: another biller's delivery is admitted behind at most that many of each other biller's, and
 * those are deliveries to send, not a backlog to pick up and put back.
 *
 * - Who admits: the dispatcher, after turning events into deliveries (every 2 s, for every biller
 *   with something due: the sweep that also catches what a lost wake-up missed); and a delivery job
 *   when it ends (its attempt recorded, or its endpoint found paused), for its own biller: the top-up,
 *   which keeps a biller's share full while it has a backlog. Admissions of several billers are queued
 *   taking turns, one of each biller's at a time.
 * - What is due: a new delivery at once, a retry at its time in the retry schedule (each attempt is
 *   its own admission; a delivery waiting for its retry holds no place in the queue), oldest due first,
 *   then in the order the deliveries were created (their events' order).
 * - Paused endpoints: nothing of an endpoint whose circuit is open is admitted; once its opening is
 *   over, one delivery (the probe); the rest only after the probe's success has closed the circuit,
 *   and then a share at a time like any backlog.
 * - Never twice: admissions of one biller take a lock of that biller's for their transaction, and each
 *   is a compare-and-set on the delivery's row (unheld, pending, admitted as often as seen) that
 *   records the job's id; a job whose id is not its delivery's does nothing.
 * - Nothing lost: a job gives its delivery back in the transaction that records its attempt; a job
 *   Redis lost is found by the dispatcher's sweep (webhook-jobs.ts) and its delivery goes back to the
 *   backlog, to be admitted again.
 */

/** One admitted delivery: the job to queue for it, and whose it is (to queue billers in turn). */
export interface AdmittedDelivery {
  deliveryId: string;
  jobId: string;
  billerClientId: string;
}

/** Queues the jobs of admitted deliveries, in the order given. */
export type AdmittedEnqueuer = (admitted: readonly AdmittedDelivery[]) => Promise<void>;

export interface AdmissionRound {
  /** In the order queued: billers taking turns. */
  admitted: AdmittedDelivery[];
  /**
   * For a biller left with room in its share and a backlog waiting for a time (a retry not yet due,
   * an open circuit), when that time comes: when to admit for it again.
   */
  nextDueAt: Map<string, Date>;
}

export interface AdmissionOptions {
  /** Deliveries of one biller admitted at once (WEBHOOK_QUEUED_PER_BILLER). */
  perBiller?: number;
  /** Only these billers (a job's top-up); every biller with something due when absent (the dispatcher's sweep). */
  billerIds?: readonly string[];
  now?: Date;
}

/** One of each line's items at a time: the first of every line, then the second of every line, ... */
export function takingTurns<T>(lines: readonly (readonly T[])[]): T[] {
  const merged: T[] = [];
  const longest = Math.max(0, ...lines.map((line) => line.length));
  for (let i = 0; i < longest; i += 1) for (const line of lines) if (i < line.length) merged.push(line[i]!);
  return merged;
}

/**
 * Fills each biller's share of the queue from its due backlog (see above), then queues the jobs,
 * billers taking turns. If queuing fails, the deliveries go back to the backlog (what could not be
 * given back is found by the dispatcher's sweep).
 */
export async function admitDueDeliveries(db: Database, enqueue: AdmittedEnqueuer, options: AdmissionOptions = {}): Promise<AdmissionRound> {
  const perBiller = options.perBiller ?? WEBHOOK_QUEUED_PER_BILLER_DEFAULT;
  const now = options.now ?? new Date();
  // The sweep also abandons the backlog of endpoints removed since (a job that finds its endpoint gone abandons it at once).
  const sweep = options.billerIds === undefined;
  const billerIds = options.billerIds ?? (await listBillersWithDueBacklog(db, now));
  const lines: AdmittedDelivery[][] = [];
  const nextDueAt = new Map<string, Date>();
  for (const billerClientId of billerIds) {
    const { line, next } = await db.transaction().execute(async (trx) => {
      await advisoryLockBillerAdmissions(trx, billerClientId);
      if (sweep) await abandonBacklogOfRemovedEndpoints(trx, billerClientId);
      const { room, due } = await pickDueDeliveries(trx, billerClientId, perBiller, now);
      if (room <= 0) return { line: [], next: null };
      const admissions = due.map((row) => ({ id: row.id, admission: row.admissions + 1, jobId: admittedDeliveryJobId(row.id, row.admissions + 1) }));
      const marked = await markAdmitted(trx, admissions);
      const line = admissions.filter((a) => marked.has(a.id)).map((a) => ({ deliveryId: a.id, jobId: a.jobId, billerClientId }));
      // Room left: nothing more is due now, so the next admission for this biller waits for a time.
      return { line, next: line.length < room ? await nextDueInBacklog(trx, billerClientId, now) : null };
    });
    if (line.length > 0) lines.push(line);
    if (next) nextDueAt.set(billerClientId, next);
  }
  const admitted = takingTurns(lines);
  if (admitted.length > 0) {
    try {
      await enqueue(admitted);
    } catch (error) {
      await Promise.allSettled(admitted.map((a) => releaseDelivery(db, a.deliveryId, a.jobId)));
      throw error;
    }
  }
  return { admitted, nextDueAt };
}

/**
 * A job that was queued outside admission (an operator's redelivery, a job queued before admission
 * existed, a job run again after it gave its delivery back) asks for its delivery: it is handed the
 * delivery if no job holds it, it is due, and the biller's share has room; otherwise the delivery
 * stays where it is (held, or in the backlog, to be admitted in turn).
 */
export async function admitDeliveryToJob(
  db: Database,
  delivery: { deliveryId: string; billerClientId: string },
  jobId: string,
  perBiller: number = WEBHOOK_QUEUED_PER_BILLER_DEFAULT,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await advisoryLockBillerAdmissions(trx, delivery.billerClientId);
    if ((await countAdmitted(trx, delivery.billerClientId)) >= perBiller) return false;
    return claimDeliveryForJob(trx, delivery.deliveryId, jobId, new Date());
  });
}
