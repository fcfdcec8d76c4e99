import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, type RawBuilder } from 'kysely';

/**
 * Compiles SQL and nothing else: the text of a fragment, as the pool's Kysely would write it, without
 * a connection.
 */
export const compileOnly = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const fixed = new Map<string, RawBuilder<unknown>>();

/**
 * A fragment that is the same on every call (table and column names, literals, no parameters) as one
 * piece of raw text, built and compiled the first time its key is asked for. The nightly statements
 * and POST /payments embed such fragments (a payment event's columns, a status guard) in every call;
 * rebuilding them node by node was a tenth of the worker's and the API's CPU.
 */
export function fixedSql(key: string, build: () => RawBuilder<unknown>): RawBuilder<unknown> {
  let fragment = fixed.get(key);
  if (fragment === undefined) {
    const compiled = build().compile(compileOnly);
    if (compiled.parameters.length > 0) throw new Error(`fixedSql ${key}: the fragment has parameters; write its values as literals`);
    fragment = sql.raw(compiled.sql);
    fixed.set(key, fragment);
  }
  return fragment;
}
