/**
 * A large payout is assembled in chunks that commit on their own and run side by side, so one biller's
 * million entries use every core PostgreSQL has instead of one. A chunk holds whole payment requests:
 * a payment's entries net against each other and its paid-out amount moves once per payout, so they
 * must never be split between two transactions.
 */

/** Below this many entries per chunk, a second transaction costs more than it saves. */
export const MIN_ENTRIES_PER_PAYOUT_CHUNK = 50_000;

/**
 * How many chunks a payout of `entries` ledger entries is assembled in: as many as may run at once,
 * but none smaller than `minEntriesPerChunk`, and always at least one. Each chunk reads the group's
 * whole unpaid set to take its share, so more chunks than can run at once would only read it more.
 */
export function payoutChunkCount(entries: number, concurrency: number, minEntriesPerChunk: number = MIN_ENTRIES_PER_PAYOUT_CHUNK): number {
  if (!Number.isSafeInteger(entries) || entries < 0) throw new RangeError(`entries must be a non-negative integer, got ${entries}`);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  if (!Number.isSafeInteger(minEntriesPerChunk) || minEntriesPerChunk < 1) {
    throw new RangeError(`minEntriesPerChunk must be a positive integer, got ${minEntriesPerChunk}`);
  }
  return Math.max(1, Math.min(concurrency, Math.floor(entries / minEntriesPerChunk)));
}

/**
 * The chunk (0 .. chunks-1) a payment request's entries belong to: its id's last byte, modulo the
 * chunk count. The last byte of a random or time-ordered (version 7) UUID is random, so chunks come
 * out even. The payout statement computes the same in SQL (`get_byte(uuid_send(id), 15) % chunks`).
 */
export function payoutChunkOf(paymentRequestId: string, chunks: number): number {
  if (!Number.isSafeInteger(chunks) || chunks < 1) throw new RangeError(`chunks must be a positive integer, got ${chunks}`);
  const lastByte = Number.parseInt(paymentRequestId.slice(-2), 16);
  if (!/^[0-9a-f]{2}$/i.test(paymentRequestId.slice(-2)) || Number.isNaN(lastByte)) throw new RangeError(`not a UUID: ${paymentRequestId}`);
  return lastByte % chunks;
}
