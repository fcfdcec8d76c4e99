import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { readSourceFiles } from './import-graph.ts';

// One word, one meaning: a type name exported from src/ names one type. Two files that each declare
// an exported type, interface, class or enum of the same name make an import say less than it seems
// (which `PushOutcome` is this?). Re-exporting a type another file declares is fine: it is the same
// type (`export type { X } from './x.ts'`, or `import type { X } ...; export type { X };`).

interface TextFile {
  path: string;
  text: string;
}

const isExported = (statement: ts.Statement) =>
  ts.canHaveModifiers(statement) && (ts.getModifiers(statement) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);

const declaresType = (statement: ts.Statement): statement is ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.ClassDeclaration | ts.EnumDeclaration =>
  ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement);

/** Names of the types a file itself declares and exports (re-exports of types declared elsewhere left out). */
function exportedTypeNames(file: TextFile): string[] {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, false);
  const declared = new Map<string, boolean>();
  for (const statement of source.statements) {
    if (declaresType(statement) && statement.name) {
      const name = statement.name.text;
      declared.set(name, (declared.get(name) ?? false) || isExported(statement));
    }
  }
  const names = new Set([...declared].filter(([, exported]) => exported).map(([name]) => name));
  // `export { X }` / `export { X as Y }` of a type declared here (unexported) declares it too; of an
  // imported one, or with `from`, it is a re-export.
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement) || statement.moduleSpecifier || !statement.exportClause || !ts.isNamedExports(statement.exportClause)) continue;
    for (const element of statement.exportClause.elements) {
      const local = (element.propertyName ?? element.name).getText(source);
      if (declared.has(local)) names.add(element.name.getText(source));
    }
  }
  return [...names].sort();
}

/** `Name: a.ts, b.ts` for every type name that more than one file declares and exports. */
function duplicateTypeNames(files: readonly TextFile[]): string[] {
  const declaredIn = new Map<string, string[]>();
  for (const file of files) {
    for (const name of exportedTypeNames(file)) declaredIn.set(name, [...(declaredIn.get(name) ?? []), file.path]);
  }
  return [...declaredIn]
    .filter(([, paths]) => paths.length > 1)
    .map(([name, paths]) => `${name}: ${paths.join(', ')}`)
    .sort();
}

describe('exported type names, on made-up files', () => {
  it('reads exported interfaces, type aliases, classes and enums, and nothing unexported', () => {
    const text = [
      'export interface A { a: string }',
      "export type B = 'b';",
      'export class C extends Error {}',
      'export enum D { d }',
      'interface Hidden { h: number }',
      'type AlsoHidden = Hidden;',
      'export const value = 1;',
      'export function f(): void {}',
    ].join('\n');
    expect(exportedTypeNames({ path: 'src/a/a.ts', text })).toEqual(['A', 'B', 'C', 'D']);
  });

  it('counts an export list of a type declared in the file, not one of an imported type', () => {
    const text = [
      "import type { Imported } from '../b/b.ts';",
      'interface Local { l: string }',
      'type Other = string;',
      'export type { Imported, Local };',
      'export { type Other as Renamed };',
    ].join('\n');
    expect(exportedTypeNames({ path: 'src/a/a.ts', text })).toEqual(['Local', 'Renamed']);
  });

  it('fails when two files declare the same exported type name, whatever its shape', () => {
    const files = [
      { path: 'src/cycle/instructions/provider-push-service.ts', text: 'export interface PushOutcome { sent: number }' },
      { path: 'src/cycle/deduction-records/push-service.ts', text: 'export interface PushOutcome { response: unknown }' },
      { path: 'src/platform/db/tables.ts', text: "export type Status = 'a' | 'b';" },
      { path: 'src/things/thing-transitions.ts', text: "export type Status = 'a' | 'b';" },
    ];
    expect(duplicateTypeNames(files)).toEqual([
      'PushOutcome: src/cycle/instructions/provider-push-service.ts, src/cycle/deduction-records/push-service.ts',
      'Status: src/platform/db/tables.ts, src/things/thing-transitions.ts',
    ]);
  });

  it('allows re-exports of the same type', () => {
    const files = [
      { path: 'src/platform/db/tables.ts', text: "export type Status = 'a' | 'b';\nexport interface Row { status: Status }" },
      { path: 'src/things/thing-transitions.ts', text: "import type { Status } from '../db/tables.ts';\nexport type { Status };" },
      { path: 'src/things/thing-resource.ts', text: "export type { Status } from '../db/tables.ts';\nexport { type Row } from '../db/tables.ts';" },
    ];
    expect(duplicateTypeNames(files)).toEqual([]);
  });

  it('a file that declares a type twice (declaration merging) is one file', () => {
    expect(duplicateTypeNames([{ path: 'src/a/a.ts', text: 'export interface A { a: string }\nexport interface A { b: string }' }])).toEqual([]);
  });
});

describe('exported type names in src/', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const files = readSourceFiles(root, ['src']).filter((file) => file.path.endsWith('.ts'));

  it('reads the whole tree', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap(exportedTypeNames).length).toBeGreaterThan(100);
  });

  it('every exported type name is declared in one file only', () => {
    expect(duplicateTypeNames(files)).toEqual([]);
  });
});
