/**
 * The answer, or a rejection once `timeoutMs` has passed without one: for a dependency that may hang
 * rather than refuse (a half-open connection), where waiting for TCP to give up would hold up a page,
 * a report or a scrape. The work itself is not cancelled; its late answer is ignored.
 */
export async function answeredWithin<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
