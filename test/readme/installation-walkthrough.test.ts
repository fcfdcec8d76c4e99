import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { adminUrl, databaseUrl, testDatabaseName } from '../support/database-admin.ts';
import { freePort } from '../support/private-servers.ts';
import { sectionShellBlocks } from './readme-walkthrough.ts';

// "Set up an installation" (docs/walkthrough.md, linked from the README's map), run exactly as
// written (its `sh` blocks, read from that file) by bash, from an empty database to a payment collected and paid out, with only the CLI
// and the API. The environment points the commands at a database that does not exist yet, a queue
// prefix, a port and key files of this test's own; nothing else differs from what an operator runs,
// except that `npx deductions` goes straight to the package's bin (bin/deductions.mjs, what npx would
// find) without npm's resolver, which costs half a second a command and is not ours to test.

const root = new URL('../..', import.meta.url).pathname;
const WALKTHROUGH = 'docs/walkthrough.md';
const SECTION = '# Set up an installation';

interface ScriptRun {
  code: number | null;
  output: string;
}

function runScript(script: string, env: Record<string, string>, timeoutMs: number): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    // Its own process group: what the walkthrough starts in the background is stopped with it.
    const child = spawn('bash', ['-c', script], { cwd: root, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      output += `\n[walkthrough test] timed out after ${timeoutMs} ms\n`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* the group has ended */
      }
      resolve({ code, output });
    });
  });
}

describe('docs/walkthrough.md: Set up an installation', () => {
  const databaseName = testDatabaseName('dtest');
  const scratch = mkdtempSync(join(tmpdir(), 'walkthrough-'));

  afterAll(async () => {
    const admin = new pg.Client({ connectionString: adminUrl() });
    await admin.connect();
    await admin.query(`drop database if exists ${databaseName} with (force)`);
    await admin.end();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('goes from an empty database to a payment collected and paid out, with the commands the walkthrough shows', async () => {
    const blocks = sectionShellBlocks(readFileSync(join(root, WALKTHROUGH), 'utf8'), SECTION);
    expect(blocks.length).toBeGreaterThan(0);
    const port = await freePort();
    const shims = join(scratch, 'bin');
    mkdirSync(shims);
    const realNpx = execFileSync('bash', ['-c', 'command -v npx'], { encoding: 'utf8' }).trim();
    writeFileSync(
      join(shims, 'npx'),
      `#!/usr/bin/env bash\nif [ "$1" = deductions ]; then shift; exec node ${JSON.stringify(join(root, 'bin/deductions.mjs'))} "$@"; fi\nexec ${JSON.stringify(realNpx)} "$@"\n`,
    );
    chmodSync(join(shims, 'npx'), 0o755);
    const run = await runScript(
      ['set -euo pipefail', ...blocks].join('\n'),
      {
        DATABASE_URL: databaseUrl(databaseName),
        QUEUE_PREFIX: `walkthrough-${randomBytes(4).toString('hex')}`,
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        AUTH_SIGNING_KEY_FILE: join(scratch, 'auth-signing-key.pem'),
        SECRETS_KEY_FILE: join(scratch, 'secrets-key'),
        FILES_DIR: join(scratch, 'files'),
        LOG_LEVEL: 'warn',
        PATH: `${shims}:${process.env.PATH ?? ''}`,
      },
      300_000,
    );
    expect(run.code, run.output).toBe(0);

    // What the walkthrough did, as the database recorded it.
    const db = new pg.Client({ connectionString: databaseUrl(databaseName) });
    await db.connect();
    try {
      const payments = await db.query<{ status: string; amount: string; paid_out_amount: string }>('select status, amount, paid_out_amount from payment_requests');
      expect(payments.rows).toEqual([{ status: 'paid_out', amount: payments.rows[0]!.amount, paid_out_amount: payments.rows[0]!.amount }]);
      const payouts = await db.query<{ status: string }>('select status from payouts');
      expect(payouts.rows).toEqual([{ status: 'paid' }]);
    } finally {
      await db.end();
    }
  }, 330_000);
});
