import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

/**
 * PostgreSQL and Redis servers of a test's own, on free ports, for tests that take a dependency
 * down and bring it back. The shared servers are never stopped.
 */

const run = promisify(execFile);
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const isRoot = () => process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: as root, its tools run as the postgres user. */
function asPostgres(command: string, args: string[]) {
  return isRoot() ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);
}

export interface PrivatePostgres {
  url: string;
  port: number;
  start(): Promise<void>;
  /**
   * `immediate` is a crash as far as clients can tell: sessions are cut without a checkpoint.
   * Commits survive it (fsync is off, but the WAL is in the OS cache, which outlives the server).
   */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  destroy(): Promise<void>;
}

/** A temporary directory the postgres user owns (PostgreSQL refuses a data directory it does not own). */
async function postgresOwnedDirectory(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  if (isRoot()) {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    await chown(dir, Number(uid.stdout), Number(gid.stdout));
  }
  return dir;
}

/** A data directory under `dir`, run with pg_ctl on a free port of 127.0.0.1 with `settings` (`name=value`). */
async function serverIn(dir: string, data: string, settings: readonly string[]): Promise<PrivatePostgres> {
  const port = await freePort();
  const options = [`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, ...settings.map((setting) => `-c ${setting}`)].join(' ');
  let running = false;
  const stop = async (mode: 'immediate' | 'fast' = 'immediate') => {
    await asPostgres(join(PG_BIN, 'pg_ctl'), ['-D', data, '-m', mode, '-w', 'stop']);
    running = false;
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      if (running) return;
      await asPostgres(join(PG_BIN, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
      running = true;
    },
    stop,
    async destroy() {
      if (running) await stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** No fsync: a test's server need not survive the machine, and it starts and writes faster. */
const UNSYNCED = ['fsync=off', 'full_page_writes=off'];

export async function createPrivatePostgres(options: { settings?: readonly string[] } = {}): Promise<PrivatePostgres> {
  const dir = await postgresOwnedDirectory('private-pg-');
  const data = join(dir, 'data');
  await asPostgres(join(PG_BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  return serverIn(dir, data, [...UNSYNCED, ...(options.settings ?? [])]);
}

/**
 * A streaming replica of a running private primary: pg_basebackup over the replication protocol
 * (initdb's trust rules allow it from 127.0.0.1, and wal_level=replica is the default), `-R` writes
 * primary_conninfo and standby.signal, so once started it replays the primary's WAL as it comes.
 * Not started: call start().
 */
export async function createStreamingReplica(primary: PrivatePostgres, options: { settings?: readonly string[] } = {}): Promise<PrivatePostgres> {
  const dir = await postgresOwnedDirectory('private-pg-replica-');
  const data = join(dir, 'data');
  await asPostgres(join(PG_BIN, 'pg_basebackup'), [
    '-D',
    data,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '--no-sync',
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
  ]);
  return serverIn(dir, data, ['fsync=off', ...(options.settings ?? [])]);
}

export interface PrivateRedis {
  url: string;
  start(): Promise<void>;
  /** SIGKILL: Redis vanishes the way a crash or a lost node makes it vanish. */
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

export async function createPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    child = undefined;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      if (child && child.exitCode === null) return;
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
        stdio: 'ignore',
      });
      for (let attempt = 0; !(await accepts(port)); attempt++) {
        if (attempt >= 100 || child.exitCode !== null) throw new Error(`redis-server on port ${port} did not start`);
        await sleep(50);
      }
    },
    stop,
    destroy: stop,
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
