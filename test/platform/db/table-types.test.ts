import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../../../src/platform/db/connection.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

// src/platform/db/tables.ts is written by hand, not generated (issue 32): it carries what the schema cannot
// say (the status unions' names, IsoDate, the int8 and numeric parsers' types, what an insert may
// omit, comments). This keeps it current instead: the migrated schema, read from pg_catalog, and the
// DB type, read by the TypeScript checker, must agree table by table and column by column. A
// migration that adds a column, a table or a status without tables.ts fails here.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const TABLES_FILE = resolve(root, 'src/platform/db/tables.ts');

// ---------------------------------------------------------------------------------------------------
// The database side

interface DbColumn {
  /** format_type of the column's type, a domain resolved to its base type: 'bigint', 'text[]', 'timestamp with time zone'. */
  type: string;
  nullable: boolean;
  /** A default, an identity (by default) or a serial: an insert may omit it. */
  hasDefault: boolean;
  /** GENERATED ALWAYS (identity or stored expression): an insert may not give it. */
  generatedAlways: boolean;
  /** The values a single-column `col in (...)` check (or the column's domain's check) allows; null without one. */
  allowed: string[] | null;
}

type DbSchema = Map<string, Map<string, DbColumn>>;

/** `CHECK ((status = ANY (ARRAY['a'::text, 'b'::text])))`, `CHECK ((VALUE = ANY (...)))` or `CHECK ((kind = 'a'::text))` -> the values. */
function allowedValues(definition: string): string[] | null {
  const match =
    /^CHECK \(\(\(?(?:"?\w+"?|VALUE)\)?(?:::text)? = ANY \(\(?ARRAY\[(.*)\](?:\)::text\[\])?\)\)\)$/s.exec(definition) ??
    /^CHECK \(\((?:"?\w+"?|VALUE) = ('(?:[^']|'')*'::\w+(?: \w+)?)\)\)$/s.exec(definition);
  if (!match) return null;
  const values = [...match[1]!.matchAll(/'((?:[^']|'')*)'::(?:text|character varying|bpchar)/g)].map((m) => m[1]!.replaceAll("''", "'"));
  return values.length > 0 ? values : null;
}

async function readDatabaseSchema(db: Executor): Promise<DbSchema> {
  const { rows } = await sql<{
    table_name: string;
    column_name: string;
    type: string;
    not_null: boolean;
    has_default: boolean;
    identity: string;
    generated: string;
    checks: string[];
  }>`
    select c.relname as table_name, a.attname as column_name,
      format_type(case when t.typtype = 'd' then t.typbasetype else t.oid end, null) as type,
      a.attnotnull as not_null, a.atthasdef as has_default, a.attidentity as identity, a.attgenerated as generated,
      array(
        select pg_get_constraintdef(k.oid) from pg_constraint k
        where k.contype = 'c' and ((k.conrelid = c.oid and k.conkey = array[a.attnum]) or k.contypid = a.atttypid)
        order by k.conname
      ) as checks
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    join pg_type t on t.oid = a.atttypid
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
      and c.relname not in ('kysely_migration', 'kysely_migration_lock')
    order by c.relname, a.attnum
  `.execute(db);
  const schema: DbSchema = new Map();
  for (const row of rows) {
    const lists = row.checks.map(allowedValues).filter((values): values is string[] => values !== null);
    // Two lists (a domain's and the column's own) allow what both allow.
    const allowed = lists.length === 0 ? null : lists.reduce((both, values) => both.filter((value) => values.includes(value)));
    const columns = schema.get(row.table_name) ?? new Map<string, DbColumn>();
    columns.set(row.column_name, {
      type: row.type,
      nullable: !row.not_null,
      hasDefault: row.has_default || row.identity === 'd',
      generatedAlways: row.identity === 'a' || row.generated === 's',
      allowed,
    });
    schema.set(row.table_name, columns);
  }
  return schema;
}

// ---------------------------------------------------------------------------------------------------
// The TypeScript side

interface TsColumn {
  /** What a select gives, null left out: 'string', 'number', 'bigint', 'boolean', 'Date', 'Buffer', 'string[]', 'unknown', 'object'. String literals count as 'string'. */
  kinds: string[];
  nullable: boolean;
  /** The string literals of a union (`'a' | 'b'`), sorted; null when the type is no literal union. */
  literals: string[] | null;
  /** Insertable may leave it out (Generated<>, ColumnType<…, … | undefined, …>). */
  insertOptional: boolean;
  /** Insertable may not give it (GeneratedAlways<>, ColumnType<…, never, …>). */
  insertNever: boolean;
  /** The declared type as written, Generated<>/ColumnType<> and `| null` taken off: 'IsoDate', 'MinorUnits', 'MandateStatus'. */
  written: string;
}

type TsSchema = Map<string, Map<string, TsColumn>>;

const compilerOptions = (() => {
  const configFile = ts.readConfigFile(resolve(root, 'tsconfig.json'), ts.sys.readFile);
  return ts.parseJsonConfigFileContent(configFile.config, ts.sys, root).options;
})();

/** The DB interface of tables.ts, through the checker (so imported and aliased types resolve); `text` replaces the file's contents. */
function readTableTypes(text?: string, file = TABLES_FILE): TsSchema {
  const host = ts.createCompilerHost(compilerOptions, true);
  if (text !== undefined) {
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, languageVersion, ...rest) =>
      resolve(name) === file ? ts.createSourceFile(name, text, languageVersion, true) : getSourceFile(name, languageVersion, ...rest);
  }
  const program = ts.createProgram([file], { ...compilerOptions, noEmit: true }, host);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const dbDeclaration = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'DB');
  if (!dbDeclaration) throw new Error(`${file} declares no interface DB`);

  const constituents = (type: ts.Type): ts.Type[] => (type.isUnion() ? type.types : [type]);
  /** Kysely's SelectType/InsertType: a ColumnType's __select__/__insert__, any other type itself (per union member). */
  const columnPart = (type: ts.Type, part: '__select__' | '__insert__', at: ts.Node): ts.Type[] =>
    constituents(type).flatMap((member) => {
      const property = member.getProperty(part);
      return property ? constituents(checker.getTypeOfSymbolAtLocation(property, at)) : [member];
    });
  const kindOf = (type: ts.Type, outer: readonly ts.Type[] = []): string => {
    if (type.flags & (ts.TypeFlags.String | ts.TypeFlags.StringLiteral)) return 'string';
    if (type.flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral)) return 'number';
    if (type.flags & (ts.TypeFlags.BigInt | ts.TypeFlags.BigIntLiteral)) return 'bigint';
    if (type.flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) return 'boolean';
    if (type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return 'unknown';
    if (type.flags & ts.TypeFlags.Undefined) return 'undefined';
    if (checker.isArrayType(type)) {
      // A recursive type (a JSON value: arrays of JSON values) is no column type of ours; stop at it.
      if (outer.includes(type)) return 'recursive';
      const element = checker.getTypeArguments(type as ts.TypeReference)[0]!;
      return `${[...new Set(constituents(element).map((member) => kindOf(member, [...outer, type])))].sort().join(' | ')}[]`;
    }
    const name = type.getSymbol()?.getName();
    return name === 'Date' || name === 'Buffer' ? name : 'object';
  };
  /** The written type without the wrappers and `| null`: Generated<IsoDate | null> -> 'IsoDate'. */
  const written = (node: ts.TypeNode | undefined): string => {
    if (!node) return '';
    if (ts.isTypeReferenceNode(node) && ['Generated', 'GeneratedAlways', 'ColumnType'].includes(node.typeName.getText()) && node.typeArguments?.[0]) {
      return written(node.typeArguments[0]);
    }
    if (ts.isUnionTypeNode(node)) {
      const rest = node.types.filter((t) => !(ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword));
      if (rest.length === 1) return written(rest[0]);
    }
    return node.getText();
  };

  const schema: TsSchema = new Map();
  for (const table of checker.getTypeAtLocation(dbDeclaration).getProperties()) {
    const columns = new Map<string, TsColumn>();
    for (const column of checker.getTypeOfSymbolAtLocation(table, dbDeclaration).getProperties()) {
      const declaration = column.valueDeclaration ?? column.declarations?.[0] ?? dbDeclaration;
      const type = checker.getTypeOfSymbolAtLocation(column, declaration);
      const select = columnPart(type, '__select__', declaration);
      const insert = columnPart(type, '__insert__', declaration);
      const present = select.filter((t) => !(t.flags & ts.TypeFlags.Null));
      const literals = present.every((t) => t.isStringLiteral()) && present.length > 0 ? present.map((t) => (t as ts.StringLiteralType).value).sort() : null;
      columns.set(column.getName(), {
        kinds: [...new Set(present.map((t) => kindOf(t)))].sort(),
        nullable: present.length < select.length,
        literals,
        insertOptional: insert.some((t) => t.flags & ts.TypeFlags.Undefined),
        insertNever: insert.every((t) => t.flags & ts.TypeFlags.Never),
        written: written(ts.isPropertySignature(declaration) ? declaration.type : undefined),
      });
    }
    schema.set(table.getName(), columns);
  }
  return schema;
}

// ---------------------------------------------------------------------------------------------------
// The comparison: pure, so it is tested below on made-up schemas that disagree.

/** What a select gives for each PostgreSQL type, with the type parsers of src/platform/db/connection.ts. */
const SELECT_KIND: Record<string, string> = {
  smallint: 'number',
  integer: 'number',
  /** parseSafeInteger: a safe integer (MinorUnits for money), never a string. */
  bigint: 'number',
  /** parseExactInteger: a BigInt. */
  numeric: 'bigint',
  'double precision': 'number',
  real: 'number',
  text: 'string',
  'character varying': 'string',
  character: 'string',
  uuid: 'string',
  boolean: 'boolean',
  /** 'YYYY-MM-DD', never a local-midnight Date. */
  date: 'string',
  'timestamp with time zone': 'Date',
  'timestamp without time zone': 'Date',
  bytea: 'Buffer',
};
/** pg parses json and jsonb; what the object is, the table says (Json, or the document's own type). */
const UNCHECKED_TYPES = new Set(['json', 'jsonb']);

/**
 * Columns whose TypeScript union the database does not check, and why that is right. Add here only
 * with a reason; a missing check constraint is usually better fixed by a migration.
 */
const UNCHECKED_UNIONS: Record<string, string> = {
  'employer_opt_in_changes.from_status': "the employer's salary_deduction_opt_in_status (checked) before the change, copied by the code that writes it",
  'events.payment_status': "a narrow payment_request.updated event's copy of payment_requests.status (checked), written with the event",
};

function expectedKind(type: string): string | undefined {
  if (type.endsWith('[]')) {
    const element = expectedKind(type.slice(0, -2));
    return element === undefined ? undefined : `${element}[]`;
  }
  return SELECT_KIND[type];
}

/** Every way tables.ts and the schema disagree, one line each, sorted; empty when they agree. */
function compareSchemas(db: DbSchema, code: TsSchema, uncheckedUnions: Record<string, string> = UNCHECKED_UNIONS): string[] {
  const problems: string[] = [];
  for (const table of db.keys()) if (!code.has(table)) problems.push(`${table}: a table in the database, not in DB of tables.ts`);
  for (const table of code.keys()) if (!db.has(table)) problems.push(`${table}: in DB of tables.ts, no such table in the database`);

  for (const [table, dbColumns] of db) {
    const codeColumns = code.get(table);
    if (!codeColumns) continue;
    for (const name of codeColumns.keys()) if (!dbColumns.has(name)) problems.push(`${table}.${name}: in tables.ts, no such column in the database`);
    for (const [name, column] of dbColumns) {
      const at = `${table}.${name}`;
      const typed = codeColumns.get(name);
      if (!typed) {
        problems.push(`${at}: a ${column.type} column in the database, not in tables.ts`);
        continue;
      }
      if (column.nullable !== typed.nullable) {
        problems.push(column.nullable ? `${at}: nullable in the database, no \`| null\` in tables.ts` : `${at}: not null in the database, \`| null\` in tables.ts`);
      }

      if (!UNCHECKED_TYPES.has(column.type)) {
        const kind = expectedKind(column.type);
        if (kind === undefined) {
          problems.push(`${at}: no rule for what a select gives for ${column.type}: add one to SELECT_KIND in test/platform/db/table-types.test.ts`);
        } else if (typed.kinds.join(' | ') !== kind) {
          problems.push(`${at}: ${column.type} reads as ${kind}, tables.ts says ${typed.kinds.join(' | ') || 'never'}`);
        } else if (column.type === 'date' && typed.written !== 'IsoDate') {
          problems.push(`${at}: a date column is written IsoDate in tables.ts, not ${typed.written}`);
        }
      }

      if (column.allowed) {
        const allowed = [...column.allowed].sort();
        if (typed.literals === null) {
          problems.push(`${at}: the database allows only ${allowed.join(', ')}; tables.ts says ${typed.written}, not that union`);
        } else if (typed.literals.join(',') !== allowed.join(',')) {
          const missing = allowed.filter((value) => !typed.literals!.includes(value));
          const extra = typed.literals.filter((value) => !allowed.includes(value));
          problems.push(
            `${at}: the database allows ${allowed.join(', ')}; tables.ts's ${typed.written}` +
              (missing.length > 0 ? ` lacks ${missing.join(', ')}` : '') +
              (missing.length > 0 && extra.length > 0 ? ' and' : '') +
              (extra.length > 0 ? ` has ${extra.join(', ')} too` : ''),
          );
        }
      } else if (typed.literals !== null && !(at in uncheckedUnions)) {
        problems.push(`${at}: tables.ts narrows it to ${typed.literals.join(', ')}, which no check constraint enforces (add one, or list it in UNCHECKED_UNIONS with why)`);
      }

      if (column.generatedAlways && !typed.insertNever) {
        problems.push(`${at}: generated always by the database; tables.ts lets an insert give it (GeneratedAlways<> or ColumnType<…, never, …>)`);
      } else if (!column.generatedAlways && typed.insertNever && !column.hasDefault && !column.nullable) {
        problems.push(`${at}: tables.ts lets no insert give it, but the database has no default for it`);
      }
      if (typed.insertOptional && !column.nullable && !column.hasDefault && !column.generatedAlways) {
        problems.push(`${at}: Generated<> in tables.ts, but the database has no default: an insert that leaves it out fails`);
      }
    }
  }
  return problems.sort();
}

// ---------------------------------------------------------------------------------------------------

const column = (overrides: Partial<DbColumn> = {}): DbColumn => ({ type: 'text', nullable: false, hasDefault: false, generatedAlways: false, allowed: null, ...overrides });
const typed = (overrides: Partial<TsColumn> = {}): TsColumn => ({
  kinds: ['string'],
  nullable: false,
  literals: null,
  insertOptional: false,
  insertNever: false,
  written: 'string',
  ...overrides,
});
const schemaOf = <T>(tables: Record<string, Record<string, T>>) => new Map(Object.entries(tables).map(([name, columns]) => [name, new Map(Object.entries(columns))]));

describe('allowedValues, on constraint definitions as pg_get_constraintdef writes them', () => {
  it('reads a column in (...) check, a domain one and a single-value one', () => {
    expect(allowedValues("CHECK ((status = ANY (ARRAY['pending'::text, 'paid'::text, 'it''s'::text])))")).toEqual(['pending', 'paid', "it's"]);
    expect(allowedValues("CHECK ((VALUE = ANY (ARRAY['scotland'::text, 'northern-ireland'::text])))")).toEqual(['scotland', 'northern-ireland']);
    expect(allowedValues("CHECK (((VALUE)::text = ANY ((ARRAY['YES'::character varying, 'NO'::character varying])::text[])))")).toEqual(['YES', 'NO']);
    expect(allowedValues("CHECK ((kind = 'light'::text))")).toEqual(['light']);
  });

  it('reads nothing from other checks', () => {
    expect(allowedValues('CHECK ((amount > 0))')).toBeNull();
    expect(allowedValues("CHECK ((sort_code ~ '^[0-9]{2}-[0-9]{2}-[0-9]{2}$'::text))")).toBeNull();
    expect(allowedValues("CHECK (((outcome <> ALL (ARRAY['debit'::text, 'unusable'::text])) OR (bank_credit_id IS NULL)))")).toBeNull();
    expect(allowedValues("CHECK (((reason IS NULL) OR (reason = ANY (ARRAY['a'::text]))))")).toBeNull();
  });
});

describe('compareSchemas, on made-up schemas', () => {
  const agreeing = () => ({
    db: schemaOf({
      payments: {
        id: column({ type: 'uuid', hasDefault: true }),
        amount: column({ type: 'bigint' }),
        status: column({ hasDefault: true, allowed: ['pending', 'paid'] }),
        pay_date: column({ type: 'date', nullable: true }),
        sequence: column({ type: 'bigint', generatedAlways: true }),
        payload: column({ type: 'jsonb', nullable: true }),
      },
    }),
    code: schemaOf({
      payments: {
        id: typed({ insertOptional: true }),
        amount: typed({ kinds: ['number'], written: 'MinorUnits' }),
        status: typed({ literals: ['paid', 'pending'], insertOptional: true, written: 'PaymentStatus' }),
        pay_date: typed({ nullable: true, written: 'IsoDate' }),
        sequence: typed({ kinds: ['number'], insertNever: true, written: 'number' }),
        payload: typed({ kinds: ['unknown'], nullable: true, written: 'Json' }),
      },
    }),
  });

  it('finds nothing when they agree', () => {
    const { db, code } = agreeing();
    expect(compareSchemas(db, code)).toEqual([]);
  });

  it('finds a column a migration added that tables.ts lacks, and one tables.ts has that the database lacks', () => {
    const { db, code } = agreeing();
    db.get('payments')!.set('reference', column({ nullable: true }));
    code.get('payments')!.delete('amount');
    code.get('payments')!.set('amount_minor', typed({ kinds: ['number'] }));
    expect(compareSchemas(db, code)).toEqual([
      'payments.amount: a bigint column in the database, not in tables.ts',
      'payments.amount_minor: in tables.ts, no such column in the database',
      'payments.reference: a text column in the database, not in tables.ts',
    ]);
  });

  it('finds a table on one side only', () => {
    const { db, code } = agreeing();
    db.set('refunds', new Map([['id', column({ type: 'uuid' })]]));
    code.set('chargebacks', new Map([['id', typed()]]));
    expect(compareSchemas(db, code)).toEqual(['chargebacks: in DB of tables.ts, no such table in the database', 'refunds: a table in the database, not in DB of tables.ts']);
  });

  it('finds nullability, type, union and insert disagreements', () => {
    const { db, code } = agreeing();
    const dbColumns = db.get('payments')!;
    const codeColumns = code.get('payments')!;
    dbColumns.set('status', column({ hasDefault: true, allowed: ['pending', 'paid', 'refunded'] }));
    codeColumns.set('amount', typed({ kinds: ['string'], nullable: true, written: 'string' }));
    codeColumns.set('pay_date', typed({ kinds: ['Date'], nullable: true, written: 'Date' }));
    codeColumns.set('sequence', typed({ kinds: ['number'], insertOptional: true }));
    dbColumns.set('note', column({ nullable: false }));
    codeColumns.set('note', typed({ literals: ['x'], insertOptional: true }));
    dbColumns.set('at', column({ type: 'interval' }));
    codeColumns.set('at', typed());
    expect(compareSchemas(db, code)).toEqual([
      'payments.amount: bigint reads as number, tables.ts says string',
      'payments.amount: not null in the database, `| null` in tables.ts',
      'payments.at: no rule for what a select gives for interval: add one to SELECT_KIND in test/platform/db/table-types.test.ts',
      'payments.note: Generated<> in tables.ts, but the database has no default: an insert that leaves it out fails',
      'payments.note: tables.ts narrows it to x, which no check constraint enforces (add one, or list it in UNCHECKED_UNIONS with why)',
      'payments.pay_date: date reads as string, tables.ts says Date',
      'payments.sequence: generated always by the database; tables.ts lets an insert give it (GeneratedAlways<> or ColumnType<…, never, …>)',
      "payments.status: the database allows paid, pending, refunded; tables.ts's PaymentStatus lacks refunded",
    ]);
  });

  it('finds a date column written as a plain string', () => {
    const { db, code } = agreeing();
    code.get('payments')!.set('pay_date', typed({ nullable: true, written: 'string' }));
    expect(compareSchemas(db, code)).toEqual(['payments.pay_date: a date column is written IsoDate in tables.ts, not string']);
  });
});

describe('readTableTypes, on tables.ts as the checker sees it', () => {
  const code = readTableTypes();

  it('unwraps Generated<>, ColumnType<> and imported or aliased unions', () => {
    expect(code.get('clients')!.get('role')).toMatchObject({ kinds: ['string'], literals: ['biller', 'operator', 'payroll_provider'], written: 'ClientRole' });
    expect(code.get('mandates')!.get('status')).toMatchObject({ literals: expect.arrayContaining(['active', 'revoked']), insertOptional: true, nullable: false });
    expect(code.get('payment_requests')!.get('amount')).toMatchObject({ kinds: ['number'], literals: null, written: 'MinorUnits' });
    expect(code.get('payment_requests')!.get('cancelled_at')).toMatchObject({ kinds: ['Date'], nullable: true, insertOptional: false });
    expect(code.get('events')!.get('sequence')).toMatchObject({ kinds: ['number'], insertNever: true });
    expect(code.get('payrolls')!.get('remittance_reference_number')).toMatchObject({ insertNever: true });
    expect(code.get('reconciliation_exceptions')!.get('superseded_at')).toMatchObject({ kinds: ['Date'], nullable: true, insertOptional: true });
    expect(code.get('deduction_record_voids')!.get('total_amount')).toMatchObject({ kinds: ['bigint'] });
    expect(code.get('bank_credits')!.get('transaction_references')).toMatchObject({ kinds: ['string[]'], insertOptional: true });
    expect(code.get('pay_dates')!.get('pay_date')).toMatchObject({ kinds: ['string'], written: 'IsoDate' });
  });

  it('sees a property taken out of the file', () => {
    const text = ts.sys.readFile(TABLES_FILE)!;
    const without = text.replace(/\n {2}void_id: string \| null;/, '');
    expect(without).not.toBe(text);
    expect(code.get('deduction_records')!.has('void_id')).toBe(true);
    expect(readTableTypes(without).get('deduction_records')!.has('void_id')).toBe(false);
  });
});

describe('tables.ts against the migrated schema', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(1);
  });
  afterAll(async () => database?.drop());

  it('agree on every table, column, nullability, type, status union and insert default', async () => {
    const db = await readDatabaseSchema(database.db);
    expect(db.size).toBeGreaterThan(50);
    expect(compareSchemas(db, readTableTypes())).toEqual([]);
  });

  it('disagree once a migration adds a column or a status that tables.ts does not have', async () => {
    const code = readTableTypes();
    const problems = await database.db
      .transaction()
      .execute(async (trx) => {
        await sql`alter table payouts add column bank_batch_id text`.execute(trx);
        const { rows } = await sql<{ conname: string }>`
          select conname from pg_constraint where conrelid = 'payouts'::regclass and contype = 'c' and pg_get_constraintdef(oid) like '%status = ANY%'
        `.execute(trx);
        for (const { conname } of rows) await sql`alter table payouts drop constraint ${sql.id(conname)}`.execute(trx);
        await sql`alter table payouts add constraint payouts_status_values check (status in ('pending', 'paid', 'failed', 'returned'))`.execute(trx);
        const problems = compareSchemas(await readDatabaseSchema(trx), code);
        throw Object.assign(new Error('roll back'), { problems });
      })
      .catch((error: { problems?: string[] }) => {
        if (!error.problems) throw error;
        return error.problems;
      });
    expect(problems).toEqual([
      'payouts.bank_batch_id: a text column in the database, not in tables.ts',
      "payouts.status: the database allows failed, paid, pending, returned; tables.ts's 'pending' | 'paid' | 'failed' lacks returned",
    ]);
  });
});
