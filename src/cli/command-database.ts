import { loadConfig } from '../config/config.ts';
import { createDatabase, type Database } from '../db/connection.ts';
import { reportRefusal } from './failures.ts';

/**
 * One database connection for one command. A refusal (an unknown id, a locked pay date, a client
 * already disabled) is one line on stderr and exit code 1; anything else goes on to main.ts.
 */
export async function withDatabase(work: (db: Database) => Promise<void>): Promise<void> {
  const db = createDatabase(loadConfig().DATABASE_URL, 1);
  try {
    await work(db);
  } catch (error) {
    reportRefusal(error);
  } finally {
    await db.destroy();
  }
}
