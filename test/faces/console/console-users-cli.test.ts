import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { ConsoleBrowser } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const deductions = (args: string[], input?: string) => runDeductions(args, cliEnvOf(t.config), input);
const userRow = (email: string) => t.db.selectFrom('console_users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();

// Each test starts several `deductions` processes (about a second each when idle): slow on a busy machine.
describe('deductions console-users', { timeout: 90_000 }, () => {
  it('creates a user with a generated password shown once, which signs in; the hash is scrypt and never printed', async () => {
    // At the production cost (the suite runs at 2^14): OWASP's N=2^17, r=8, p=1.
    const created = await runDeductions(['console-users', 'create', '--email', 'Fiona@Example.com', '--name', 'Fiona Finance', '--role', 'finance', '--by', 'ops-lead'], {
      ...cliEnvOf(t.config),
      CONSOLE_PASSWORD_SCRYPT_LOG_N: '17',
    });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const password = created.stdout.match(/password \(shown this once\): (\S+)/)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    const row = await userRow('fiona@example.com');
    expect(row).toMatchObject({ name: 'Fiona Finance', role: 'finance', created_by: 'ops-lead', disabled_at: null });
    expect(row.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(created.stdout).not.toContain(row.password_hash);

    const browser = new ConsoleBrowser(t.app);
    expect((await browser.signIn('fiona@example.com', password!)).statusCode).toBe(303);

    const listed = await deductions(['console-users', 'list']);
    expect(listed.stdout).toMatch(/fiona@example\.com\s+finance\s+enabled\s+last sign-in 20/);
  });

  it('takes a password from standard input and refuses a short one or a second user with the same email', async () => {
    const created = await deductions(
      ['console-users', 'create', '--email', 'olga@example.com', '--name', 'Olga', '--role', 'operator', '--password-stdin'],
      'a long enough passphrase\n',
    );
    expect(created.code).toBe(0);
    expect(created.stdout).not.toContain('password (shown this once)');
    expect((await new ConsoleBrowser(t.app).signIn('olga@example.com', 'a long enough passphrase')).statusCode).toBe(303);

    const again = await deductions(
      ['console-users', 'create', '--email', 'OLGA@example.com', '--name', 'Olga 2', '--role', 'viewer', '--password-stdin'],
      'another long passphrase\n',
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('a console user olga@example.com already exists');

    const short = await deductions(['console-users', 'create', '--email', 'vic@example.com', '--name', 'Vic', '--role', 'viewer', '--password-stdin'], 'short\n');
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('at least 12 characters');
    expect(await t.db.selectFrom('console_users').select('id').where('email', '=', 'vic@example.com').executeTakeFirst()).toBeUndefined();

    const badRole = await deductions(['console-users', 'create', '--email', 'vic@example.com', '--name', 'Vic', '--role', 'admin']);
    expect(badRole.code).not.toBe(0);
    expect(badRole.stderr).toContain('Allowed choices are operator, finance, viewer');
  });

  it('disable ends the sessions at once and refuses sign-in; enable and set-password bring the person back, audited', async () => {
    await deductions(['console-users', 'create', '--email', 'dora@example.com', '--name', 'Dora', '--role', 'viewer', '--password-stdin'], 'dora first passphrase\n');
    const browser = new ConsoleBrowser(t.app);
    await browser.signIn('dora@example.com', 'dora first passphrase');
    expect((await browser.get('/console')).statusCode).toBe(200);

    const disabled = await deductions(['console-users', 'disable', '--email', 'dora@example.com', '--reason', 'left the company', '--by', 'ops-lead']);
    expect(disabled.stdout).toContain('disabled dora@example.com; 1 session(s) ended');
    expect((await browser.get('/console')).statusCode).toBe(303);
    expect((await new ConsoleBrowser(t.app).signIn('dora@example.com', 'dora first passphrase')).statusCode).toBe(401);

    expect((await deductions(['console-users', 'enable', '--email', 'dora@example.com'])).code).toBe(0);
    const reset = await deductions(['console-users', 'set-password', '--email', 'dora@example.com', '--password-stdin'], 'dora second passphrase\n');
    expect(reset.stdout).toContain('new password set for dora@example.com');
    expect((await new ConsoleBrowser(t.app).signIn('dora@example.com', 'dora first passphrase')).statusCode).toBe(401);
    expect((await new ConsoleBrowser(t.app).signIn('dora@example.com', 'dora second passphrase')).statusCode).toBe(303);

    const user = await userRow('dora@example.com');
    const audit = await t.db.selectFrom('audit_log').select(['action', 'actor', 'reason']).where('resource_id', '=', user.id).orderBy('at').orderBy('id').execute();
    expect(audit.map((entry) => entry.action)).toEqual([
      'console_user.created',
      'console.signed_in',
      'console_user.disabled',
      'console.sign_in_failed',
      'console_user.enabled',
      'console_user.password_set',
      'console.sign_in_failed',
      'console.signed_in',
    ]);
    expect(audit[2]).toMatchObject({ actor: 'ops-lead', reason: 'left the company' });
  });

  it('names an unknown user in one line', async () => {
    const missing = await deductions(['console-users', 'disable', '--email', 'nobody@example.com']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Console user nobody@example.com was not found');
  });
});
