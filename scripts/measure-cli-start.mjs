#!/usr/bin/env node
// How soon `deductions` commands answer (issue 32: "commands that start at once"). Each command runs
// --runs times (default 10), the commands in turn so a busy moment hits them all alike; the figure is
// the median time from spawn to the first byte on stdout (to exit for commands that print nothing,
// such as the `node -e 0` baseline), and its ratio to `node -e 0` measured in the same run.
//
//   node scripts/measure-cli-start.mjs [--runs 10] [--from-source]
//
// The database reads run against a scratch database this script creates (from TEST_DATABASE_URL's
// server, postgres://postgres@127.0.0.1:5432 by default), migrates with `deductions migrate` and
// drops at the end; Redis is REDIS_URL's (the default), under a scratch queue prefix emptied at the
// end. The built dist/ is what is measured: the script says so and stops when dist/ is stale (npm run
// build), unless --from-source (DEDUCTIONS_FROM_SOURCE=1: tsx) is asked for.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { buildIsFresh } from './build-freshness.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = fileURLToPath(new URL('../bin/deductions.mjs', import.meta.url));
const argValue = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
};
const runs = Number(argValue('--runs', '10'));
const fromSource = process.argv.includes('--from-source');

if (!fromSource && !buildIsFresh(root)) {
  console.error('dist/ is stale: run `npm run build` first (or pass --from-source to measure tsx)');
  process.exit(2);
}

const server = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const scratch = `cli_start_${randomBytes(4).toString('hex')}`;
const databaseUrl = new URL(server);
databaseUrl.pathname = `/${scratch}`;
const env = {
  ...process.env,
  DATABASE_URL: databaseUrl.toString(),
  QUEUE_PREFIX: scratch,
  LOG_LEVEL: 'warn',
  ...(fromSource ? { DEDUCTIONS_FROM_SOURCE: '1' } : {}),
};

/** One run: ms to the first stdout byte (or to exit when nothing is printed), ms to exit, exit code. */
function timeOnce(argv) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
    const child = spawn(process.execPath, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let firstLine;
    let stderr = '';
    child.stdout.once('data', () => (firstLine = ms()));
    child.stdout.resume();
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const exit = ms();
      resolve({ firstLine: firstLine ?? exit, exit, code, stderr });
    });
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const commands = [
  { label: 'node -e 0', argv: ['-e', '0'] },
  { label: 'deductions --help', argv: [bin, '--help'] },
  { label: 'deductions payrolls --help', argv: [bin, 'payrolls', '--help'] },
  { label: 'deductions runs list --json', argv: [bin, 'runs', 'list', '--json'] },
  { label: 'deductions payrolls list', argv: [bin, 'payrolls', 'list'] },
  { label: 'deductions clients list', argv: [bin, 'clients', 'list'] },
  { label: 'deductions status', argv: [bin, 'status'] },
];

const admin = new pg.Client({ connectionString: server.toString() });
await admin.connect();
await admin.query(`create database ${scratch}`);
try {
  const migrate = await timeOnce([bin, 'migrate']);
  if (migrate.code !== 0) throw new Error(`deductions migrate failed (${migrate.code}): ${migrate.stderr}`);
  const samples = new Map(commands.map((command) => [command.label, { firstLine: [], exit: [] }]));
  // One warm-up round (page cache, PostgreSQL's first connection), then the measured rounds.
  for (let round = 0; round <= runs; round += 1) {
    for (const command of commands) {
      const result = await timeOnce(command.argv);
      if (result.code !== 0) throw new Error(`${command.label} exited ${result.code}: ${result.stderr}`);
      if (round === 0) continue;
      samples.get(command.label).firstLine.push(result.firstLine);
      samples.get(command.label).exit.push(result.exit);
    }
  }
  const baseline = median(samples.get('node -e 0').exit);
  const fresh = buildIsFresh(root);
  console.log(`${runs} runs each, ${fromSource ? 'from source (tsx)' : `from dist/ (${fresh ? 'still fresh' : 'STALE by the end: a source changed during the run'})`}`);
  console.log(`${'command'.padEnd(32)} ${'first line'.padStart(10)} ${'ratio'.padStart(6)} ${'exit'.padStart(8)}`);
  for (const { label } of commands) {
    const { firstLine, exit } = samples.get(label);
    const first = median(firstLine);
    console.log(`${label.padEnd(32)} ${`${first.toFixed(0)} ms`.padStart(10)} ${(first / baseline).toFixed(1).padStart(6)} ${`${median(exit).toFixed(0)} ms`.padStart(8)}`);
  }
} finally {
  await admin.query(`drop database if exists ${scratch} with (force)`);
  await admin.end();
  // `status` leaves the queues' keys under the scratch prefix.
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const keys = await redis.keys(`${scratch}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
}
