import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../../bin/deductions.mjs', import.meta.url));

/** One JSON log line of a service process (pino), or the raw text of a line that is not JSON. */
export type LogLine = Record<string, unknown> & { msg?: string; time?: number; raw?: string };

export interface ServiceProcess {
  child: ChildProcess;
  /** stdout, line by line, parsed. */
  lines: LogLine[];
  stderr: string[];
  waitForLine(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Resolves with the exit code (or signal) once the process has gone. */
  exited: Promise<number | NodeJS.Signals | null>;
  kill(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

/** `deductions <command>` as an operator starts it, with the given environment (over this process's). */
export function startService(command: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [bin, command], {
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const stderr: string[] = [];
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    for (const text of complete) {
      if (text.trim() === '') continue;
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        lines.push({ raw: text });
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return {
    child,
    lines,
    stderr,
    exited,
    async waitForLine(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find(predicate);
        if (found) return found;
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`process exited (${child.exitCode ?? child.signalCode}) before the line; stderr: ${stderr.join('')}`);
        }
        if (Date.now() > deadline) {
          throw new Error(`no such line within ${timeoutMs} ms; lines: ${JSON.stringify(lines.map((l) => l.msg ?? l.raw))}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Log lines of a service carrying a given `msg`, or a given structured `event`. */
export const linesWith = (lines: readonly LogLine[], match: { msg?: string; event?: string }) =>
  lines.filter((line) => (match.msg === undefined || line.msg === match.msg) && (match.event === undefined || line.event === match.event));
