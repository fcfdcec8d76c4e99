import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { createDatabase } from '../../src/db/connection.ts';
import { migrateToLatest } from '../../src/db/migrator.ts';
import { adminUrl, databaseUrl, dropDatabasesLike, TEMPLATE_DATABASE } from './database-admin.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/** One migrated template per run; every test file clones it (fast, and files never share data). */
export default async function setup(project: TestProject) {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await dropDatabasesLike(admin, 'dtest_%');
  await admin.query(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
  await admin.query(`create database ${TEMPLATE_DATABASE}`);
  const db = createDatabase(databaseUrl(TEMPLATE_DATABASE), 2);
  await migrateToLatest(db);
  await db.destroy();
  await admin.end();
  project.provide('templateDatabase', TEMPLATE_DATABASE);

  return async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl() });
    await cleanup.connect();
    await dropDatabasesLike(cleanup, 'dtest_%');
    await cleanup.end();
  };
}
