import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { createDatabase } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { adminUrl, databaseUrl, dropRunDatabases, dropStaleTestDatabases, runIdOf, testDatabaseName } from './database-admin.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/** One migrated template per run; every test file clones it (fast, and files never share data). */
export default async function setup(project: TestProject) {
  const template = testDatabaseName('dtpl');
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await dropStaleTestDatabases(admin);
  await admin.query(`create database ${template}`);
  const db = createDatabase(databaseUrl(template), 2);
  await migrateToLatest(db);
  await db.destroy();
  await admin.end();
  project.provide('templateDatabase', template);

  return async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl() });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${template} with (force)`);
    // Files drop their databases in the background; what a file's end cut short goes here.
    await dropRunDatabases(cleanup, runIdOf(template));
    await cleanup.end();
  };
}
