/** Shared by the benchmark scripts: formatting and phase timing. */

export const seconds = (ms: number) => (ms / 1000).toFixed(2);
export const perSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000)).toLocaleString('en-GB');
export const megabytes = (kb: number) => `${Math.round(kb / 1024)} MB`;

export async function timed<T>(label: string, work: () => Promise<T>, width = 34): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  process.stdout.write(`  ${label.padEnd(width)} ${seconds(ms).padStart(8)} s\n`);
  return { ms, result };
}
