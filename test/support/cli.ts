import { spawn } from 'node:child_process';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const bin = new URL('../../bin/deductions.mjs', import.meta.url).pathname;

/**
 * The real `deductions` command, run as an operator runs it, with `env` over this process's
 * environment and `input`, when given, piped to its standard input.
 */
export function runDeductions(args: readonly string[], env: Record<string, string | undefined> = {}, input?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What points the command at a test app's private database and queue prefix. */
export function cliEnvOf(config: { DATABASE_URL: string; QUEUE_PREFIX: string }): Record<string, string> {
  return { DATABASE_URL: config.DATABASE_URL, QUEUE_PREFIX: config.QUEUE_PREFIX, LOG_LEVEL: 'warn' };
}
