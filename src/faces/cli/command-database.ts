import type { Database } from '../../platform/db/connection.ts';

/**
 * One database connection for one command. A refusal (an unknown id, a locked pay date, a client
 * already disabled) is one line on stderr and exit code 1; anything else goes on to main.ts.
 * Command definitions import this module, so what it needs loads only when a command runs.
 */
export async function withDatabase(work: (db: Database) => Promise<void>): Promise<void> {
  const { loadConfig } = await import('../../platform/config/config.ts');
  const { createDatabase } = await import('../../platform/db/connection.ts');
  const db = createDatabase(loadConfig().DATABASE_URL, 1);
  try {
    await work(db);
  } catch (error) {
    (await import('./failures.ts')).reportRefusal(error);
  } finally {
    await db.destroy();
  }
}
