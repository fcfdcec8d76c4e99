import { once } from 'node:events';
import { createWriteStream, fchmod } from 'node:fs';
import { rm } from 'node:fs/promises';
import { stringify } from 'csv-stringify/sync';
import { neutraliseFormula } from '../../platform/shared/csv-cells.ts';
import type { ImportError } from './employee-import-rules.ts';

/** The columns of a file listing an import's bad rows. */
export const IMPORT_ERROR_FILE_COLUMNS = ['line', 'column', 'reason'] as const;

/** Where an import hands every error it finds, batch by batch, in line order within each check. */
export interface ImportErrorSink {
  write(errors: readonly ImportError[]): Promise<void>;
}

export interface ImportErrorFile extends ImportErrorSink {
  readonly path: string;
  /** Flushes and closes the file; what was written stays. */
  close(): Promise<void>;
  /** Closes the file and removes it (an import that failed leaves no half list behind). */
  discard(): Promise<void>;
}

/** One CSV line per error, never the text a spreadsheet would run as a formula. */
export function importErrorsAsCsv(errors: readonly ImportError[]): string {
  return stringify(errors.map((error) => [error.line, neutraliseFormula(error.column ?? ''), neutraliseFormula(error.reason)]));
}

/**
 * A CSV file (line,column,reason with a header line) the errors are streamed to as they are found:
 * each write waits for the disk when the stream's buffer is full, so a file of any number of bad
 * rows takes constant memory.
 */
export async function openImportErrorFile(path: string): Promise<ImportErrorFile> {
  const out = createWriteStream(path, { flags: 'w', mode: 0o600 });
  const [fd] = (await once(out, 'open')) as [number];
  // The mode applies to a new file only: one that existed with wider rights is narrowed too (people's details).
  await new Promise<void>((resolve, reject) => fchmod(fd, 0o600, (error) => (error ? reject(error) : resolve())));
  let failure: Error | undefined;
  out.on('error', (error) => {
    failure = error;
  });
  const put = async (text: string) => {
    if (failure) throw failure;
    // once() rejects when the stream fails while waiting.
    if (!out.write(text)) await once(out, 'drain');
  };
  const close = async () => {
    if (out.closed) return;
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    if (failure) throw failure;
  };
  await put(stringify([[...IMPORT_ERROR_FILE_COLUMNS]]));
  return {
    path,
    write: async (errors) => {
      if (errors.length > 0) await put(importErrorsAsCsv(errors));
    },
    close,
    discard: async () => {
      out.destroy();
      await rm(path, { force: true });
    },
  };
}
