import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import { createDatabase, type Database } from '../../src/platform/db/connection.ts';
import { createMigrator } from '../../src/platform/db/migrator.ts';
import { adminUrl, databaseUrl, testDatabaseName } from './database-admin.ts';

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * An empty database of the test file's own, for a migration's test: migrated step by step to the
 * migration before it (`before`), filled as it found the world, then up to it and down again.
 * Created before the file's tests and dropped after them.
 */
export function databaseForMigration(migration: string) {
  const index = Object.keys(migrations).indexOf(migration);
  if (index < 1) throw new Error(`${migration} is not a migration with one before it`);
  const name = testDatabaseName('dtest');
  let db: Database | undefined;
  beforeAll(async () => {
    await admin(`create database ${name}`);
    db = createDatabase(databaseUrl(name), 2);
  });
  afterAll(async () => {
    await db?.destroy();
    await admin(`drop database if exists ${name} with (force)`);
  });
  return {
    /** The migration just before it, whichever that is. */
    before: Object.keys(migrations)[index - 1]!,
    get db(): Database {
      if (!db) throw new Error('the migration database is made before the tests run');
      return db;
    },
    async migrateTo(target: string): Promise<void> {
      const result = await createMigrator(this.db).migrateTo(target);
      if (result.error) throw result.error;
    },
  };
}
