// SQL lives in .sql files, one named query each, loaded with sql('<area>/<name>') (src/store/sql.ts):
// a subsystem's beside its code (src/<subsystem>/sql/<name>.sql), the rest under
// src/store/sql/<area>/. This test keeps it there: it reads every TypeScript file under src/ and
// fails on a string that is SQL, on a .sql file that nothing loads (dead) or that no name reaches,
// and on a name that no file answers.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { SQL_SUBSYSTEMS, sqlFile } from '../../src/store/sql.js';

const ROOT = projectRoot();
const SRC = join(ROOT, 'src');
/** Numbered and applied by src/store/migrate.ts, never loaded by name. */
const MIGRATIONS = join(SRC, 'store/migrations');

/**
 * A string that reads as an SQL statement (a template's `${…}` parts read as `?`). Uppercase
 * keywords, as fencer writes SQL, so that prose ("select a node") and HTTP verbs ('DELETE') pass.
 */
const SQL_STATEMENT = new RegExp(
  '^\\s*(?:' +
    [
      'SELECT\\s[\\s\\S]*?(?:\\bFROM\\b|\\w\\s*\\(|\\d)',
      'INSERT\\s+INTO\\s',
      'UPDATE\\s+\\w+\\s+(?:\\w+\\s+)?SET\\s',
      'DELETE\\s+FROM\\s',
      'WITH\\s+(?:RECURSIVE\\s+)?\\w+\\s+AS\\s*\\(',
      '(?:CREATE|DROP|ALTER)\\s+(?:OR\\s+REPLACE\\s+)?(?:UNIQUE\\s+)?(?:TABLE|DATABASE|SCHEMA|INDEX|VIEW|FUNCTION|TRIGGER|SEQUENCE|TYPE|EXTENSION)\\b',
      'TRUNCATE\\s',
      'SET\\s+(?:LOCAL\\s+|SESSION\\s+)?[\\w.]+\\s*(?:=|TO\\b)',
      '(?:UN)?LISTEN\\s+[\\w"*]+\\s*;?\\s*$',
      'NOTIFY\\s+\\w+',
      'SAVEPOINT\\s',
      'RELEASE\\s+SAVEPOINT\\s',
      'ROLLBACK\\s+TO\\s',
      '(?:BEGIN|START\\s+TRANSACTION|COMMIT|ROLLBACK)\\s*;?\\s*$',
    ].join('|') +
    ')',
);

/**
 * The store's transaction helpers write the brackets of a transaction themselves, and a
 * rehearsal turns them into savepoints: the only SQL that stays in TypeScript.
 */
const TRANSACTION_BRACKETS: Record<string, string[]> = {
  'src/store/db.ts': ['BEGIN', 'COMMIT', 'ROLLBACK'],
  'src/store/rehearsal.ts': [
    'BEGIN',
    'COMMIT',
    'ROLLBACK',
    'SAVEPOINT ?',
    'RELEASE SAVEPOINT ?',
    'ROLLBACK TO SAVEPOINT ?',
  ],
};

interface Finding {
  at: string;
  text: string;
}

function textOf(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((s) => `?${s.literal.text}`).join('');
  return undefined;
}

/** Every piece of SQL written in one TypeScript source, with where it is. */
function inlineSql(file: string, source: string | ts.SourceFile): Finding[] {
  const tree = typeof source === 'string' ? parse(file, source) : source;
  const allowed = TRANSACTION_BRACKETS[file] ?? [];
  const found: Finding[] = [];
  const report = (node: ts.Node, text: string) => {
    const { line } = tree.getLineAndCharacterOfPosition(node.getStart());
    found.push({ at: `${file}:${line + 1}`, text: text.trim().replace(/\s+/g, ' ').slice(0, 100) });
  };
  const visit = (node: ts.Node): void => {
    const text = textOf(node);
    if (text !== undefined) {
      if (SQL_STATEMENT.test(text) && !allowed.includes(text.trim())) report(node, text);
      return;
    }
    // A query given anything written in place (a literal, a template, a concatenation) rather
    // than sql('…') or a name: whatever it says, it is SQL outside a file.
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const [first] = node.arguments;
      if (node.expression.name.text === 'query' && first && writtenInPlace(first)) {
        const text = first.getText(tree);
        if (!allowed.includes(textOf(first)?.trim() ?? '')) report(first, text);
        node.arguments.slice(1).forEach(visit);
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

function writtenInPlace(node: ts.Expression): boolean {
  if (textOf(node) !== undefined) return true;
  if (ts.isParenthesizedExpression(node)) return writtenInPlace(node.expression);
  if (ts.isBinaryExpression(node)) return writtenInPlace(node.left) || writtenInPlace(node.right);
  if (ts.isConditionalExpression(node)) return writtenInPlace(node.whenTrue) || writtenInPlace(node.whenFalse);
  return false;
}

/**
 * The query names in one source: sql('…')'s argument, and every string that looks like one (a
 * name may be picked first and passed on, as a broken variant's query is).
 */
function queryNames(tree: ts.SourceFile): { called: string[]; named: string[] } {
  const called: string[] = [];
  const named: string[] = [];
  const visit = (node: ts.Node): void => {
    const text = textOf(node);
    if (text !== undefined && /^[a-z_-]+\/[a-z_]+$/.test(text)) named.push(text);
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'sql') {
      const name = node.arguments[0] && textOf(node.arguments[0]);
      if (name !== undefined) called.push(name);
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return { called, named };
}

function filesUnder(dir: string, extension: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(extension))
    .map((f) => join(dir, f))
    .sort();
}

function parse(file: string, source: string): ts.SourceFile {
  return ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
}

function parseAll(dir: string): Array<{ file: string; tree: ts.SourceFile }> {
  return filesUnder(join(ROOT, dir), '.ts').map((path) => {
    const file = relative(ROOT, path);
    return { file, tree: parse(file, readFileSync(path, 'utf8')) };
  });
}

const sources = parseAll('src');

describe('SQL lives in .sql files', () => {
  it('no TypeScript under src/ writes SQL in a string: move it to a .sql file (src/<subsystem>/sql/ or src/store/sql/<area>/)', () => {
    const found = sources.flatMap(({ file, tree }) => inlineSql(file, tree));
    expect(found).toEqual([]);
  });

  it('every .sql file is reached by a name and loaded, and every sql() name has its file', () => {
    const paths = filesUnder(SRC, '.sql').filter((path) => !path.startsWith(MIGRATIONS + '/'));
    // The name sqlFile() resolves to each file; a file no name reaches is misplaced.
    const nameOf = (path: string): string | undefined => {
      const [top, ...rest] = relative(SRC, path)
        .replace(/\.sql$/, '')
        .split('/');
      const name = top === 'store' && rest[0] === 'sql' ? rest.slice(1).join('/') : `${top}/${rest.slice(1).join('/')}`;
      return fileURLToPath(sqlFile(name)) === path ? name : undefined;
    };
    const files = paths.flatMap((path) => nameOf(path) ?? []);
    const names = sources.map(({ tree }) => queryNames(tree));
    // Tests only name queries (a test's own SQL would be a fixture): a plain search will do.
    const namedInTests = filesUnder(join(ROOT, 'test'), '.ts').flatMap((path) =>
      [...readFileSync(path, 'utf8').matchAll(/['"`]([a-z_-]+\/[a-z_]+)['"`]/g)].map((m) => m[1]!),
    );
    const named = new Set([...names.flatMap((n) => n.named), ...namedInTests]);
    const called = new Set(names.flatMap((n) => n.called));
    expect({
      misplaced: paths.filter((path) => nameOf(path) === undefined).map((path) => relative(ROOT, path)),
      unloaded: files.filter((f) => !named.has(f)),
      missing: [...called].filter((n) => !files.includes(n)),
    }).toEqual({ misplaced: [], unloaded: [], missing: [] });
  });

  it("a subsystem's queries are found in its own sql/ folder, any other under src/store/sql/", () => {
    expect(relative(SRC, fileURLToPath(sqlFile('lease/take')))).toBe('store/sql/lease/take.sql');
    for (const subsystem of SQL_SUBSYSTEMS)
      expect(relative(SRC, fileURLToPath(sqlFile(`${subsystem}/query`)))).toBe(`${subsystem}/sql/query.sql`);
  });

  // The check itself, on planted sources: it must catch SQL however it is written, and pass what is not SQL.
  it('finds SQL planted in a query call, a template, a variable or a helper', () => {
    const planted = [
      "await db.query('SELECT holder, epoch FROM lease WHERE id = 1');",
      'await tx.query(`UPDATE jobs SET phase = ${phase} WHERE uid = $1`, [uid]);',
      "await client.query('LISTEN fencer_jobs');",
      'await tx.query(`SET LOCAL lock_timeout = ${ms}`);',
      "await client.query('BEGIN');",
      "await db.query('ANALYZE ' + table);",
      "const statement = 'DELETE FROM jobs WHERE uid = $1';",
      'await admin(`CREATE DATABASE ${name}`);',
      'const text = `WITH gone AS (DELETE FROM jobs RETURNING uid) SELECT count(*) FROM gone`;',
    ];
    const found = inlineSql('src/planted.ts', planted.join('\n'));
    expect(found.map((f) => f.at)).toEqual(planted.map((_, i) => `src/planted.ts:${i + 1}`));
  });

  it('passes sql() calls, names, prose and HTTP verbs, and transaction brackets only in the store helpers', () => {
    const clean = [
      "await db.query(sql('lease/read'));",
      'await client.query(migration.text);',
      "this.logger.warn('LISTEN connection lost; reconnecting');",
      "const verb = 'DELETE';",
      "const hint = 'Select a node from the list';",
    ].join('\n');
    expect(inlineSql('src/clean.ts', clean)).toEqual([]);
    expect(inlineSql('src/store/db.ts', "await tx.query('BEGIN');")).toEqual([]);
    expect(inlineSql('src/store/db.ts', "await tx.query('SELECT 1');")).toHaveLength(1);
  });
});
