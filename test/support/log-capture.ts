import { Writable } from 'node:stream';
import pino from 'pino';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A pino logger that keeps its lines in memory, for tests that assert what was (not) logged. */
export function captureLogs(level: pino.LevelWithSilent = 'warn') {
  const lines: LogLine[] = [];
  const logger = pino(
    { level },
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
        done();
      },
    }),
  );
  return { logger, lines, errors: () => lines.filter((line) => line.level >= 50) };
}
