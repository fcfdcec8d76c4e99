import { Migrator, type Kysely, type MigrationResultSet } from 'kysely';
import { migrations } from '../../../migrations/index.ts';

export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

function unwrap(result: MigrationResultSet): string[] {
  if (result.error) throw result.error;
  return (result.results ?? []).map((r) => `${r.direction} ${r.migrationName}: ${r.status}`);
}

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return unwrap(await createMigrator(db).migrateToLatest());
}

export async function migrateDownToEmpty(db: Kysely<any>): Promise<string[]> {
  const migrator = createMigrator(db);
  const applied: string[] = [];
  for (;;) {
    const lines = unwrap(await migrator.migrateDown());
    if (lines.length === 0) return applied;
    applied.push(...lines);
  }
}
