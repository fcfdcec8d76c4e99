import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importSpecifiers } from './architecture/import-graph.ts';
import { unitTestFiles } from './unit-project.ts';

// The `unit` project runs without the global setup, so a file in it must not reach the database or
// Redis. This keeps the split honest: it reads the imports of every unit file and of the test files
// they import (transitively; src/ is not followed) and names what reaches the database or Redis.

const root = join(dirname(new URL(import.meta.url).pathname), '..');
const self = relative(root, new URL(import.meta.url).pathname);

/** Test support that opens, clones or fills a database, or talks to Redis. */
const dbSupport = [
  'test/support/database.ts',
  'test/support/database-admin.ts',
  'test/support/global-setup.ts',
  'test/support/test-app.ts',
  'test/support/runtime.ts',
  'test/support/factories.ts',
  'test/support/world.ts',
  'test/support/private-servers.ts',
];
/** Modules that connect: the drivers and the application's own connection and runtime code. */
const connecting = [
  'pg',
  'ioredis',
  'bullmq',
  'kysely',
  'src/platform/db/connection.ts',
  'src/platform/db/admin.ts',
  'src/platform/db/migrator.ts',
  'src/platform/runtime/redis-connections.ts',
  'src/platform/runtime/runtime.ts',
];
/** Calls that only the database and Redis support make (this file names them, so it is not searched for them). */
const connectingCalls = /\b(createDatabase|createTestDatabase|startTestApp|openRuntime|inject\(\s*['"]templateDatabase)/;

/** What a test file reaches of the database and Redis support, with the chain of test files leading there. */
function databaseReach(file: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const visit = (path: string, chain: string[]) => {
    if (seen.has(path)) return;
    seen.add(path);
    const source = readFileSync(join(root, path), 'utf8');
    const via = [...chain, path].join(' -> ');
    if (path !== self && connectingCalls.test(source)) found.push(`${via} calls ${source.match(connectingCalls)![1]}`);
    for (const specifier of importSpecifiers(source, { valuesOnly: true })) {
      const target = specifier.startsWith('.') ? relative(root, join(root, dirname(path), specifier)) : specifier;
      if (dbSupport.includes(target) || connecting.includes(target)) found.push(`${via} imports ${target}`);
      else if (target.startsWith('test/') && existsSync(join(root, target))) visit(target, [...chain, path]);
    }
  };
  visit(file, []);
  return found;
}

describe('the unit project', () => {
  it('lists existing test files, once each', () => {
    expect(unitTestFiles.filter((file) => !existsSync(join(root, file)))).toEqual([]);
    expect(unitTestFiles.filter((file) => !/^test\/.+\.test\.ts$/.test(file) || file.startsWith('test/bench/'))).toEqual([]);
    expect(new Set(unitTestFiles).size).toBe(unitTestFiles.length);
  });

  it('reaches neither the database nor Redis', () => {
    expect(unitTestFiles.filter((file) => existsSync(join(root, file))).flatMap((file) => databaseReach(file))).toEqual([]);
  });

  it('sees what reaches them, through test helpers too', () => {
    expect(databaseReach('test/support/world.ts')).toContain('test/support/world.ts imports test/support/factories.ts');
    expect(databaseReach('test/support/runtime.ts')).toEqual([]);
    expect(databaseReach('test/support/test-app.ts')).toEqual(
      expect.arrayContaining(['test/support/test-app.ts imports src/platform/runtime/redis-connections.ts', 'test/support/test-app.ts imports test/support/database.ts']),
    );
  });
});
