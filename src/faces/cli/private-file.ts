import { open, type FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';

/**
 * What the CLI writes with `--out` (payment files with beneficiaries' account numbers, instruction
 * files with employees' deductions, reconciliation reports) is for the operator who asked for it:
 * readable and writable by its owner only, whatever the umask says.
 */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Opens `file` for writing, emptied, with mode 0600. The mode given to open() applies only to a
 * file it creates, so a file that already existed (say 0644 from an earlier export) is narrowed too,
 * before anything is written into it.
 */
async function openPrivately(file: string): Promise<FileHandle> {
  const handle = await open(file, 'w', PRIVATE_FILE_MODE);
  try {
    await handle.chmod(PRIVATE_FILE_MODE);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Writes `content` to `file`, readable by its owner only. */
export async function writePrivateFile(file: string, content: string | Uint8Array): Promise<void> {
  const handle = await openPrivately(file);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

/** A stream into `file`, readable by its owner only; ending the stream closes the file. */
export async function privateFileStream(file: string): Promise<Writable> {
  const handle = await openPrivately(file);
  return handle.createWriteStream();
}
