// Runtime code never builds SQL: every query lives in a .sql file, named by what it does, with a
// header comment giving its parameters. A subsystem keeps its own queries beside its code
// (src/<subsystem>/sql/); the rest are under src/store/sql/. Only the brackets of a transaction
// stay in the store's transaction helpers (db.ts, rehearsal.ts); test/unit/sql-in-files.test.ts
// keeps it so.
import { readFileSync } from 'node:fs';

/** The folders of src/ whose queries sit in their own sql/ folder: a key `<folder>/<name>` is theirs. */
export const SQL_SUBSYSTEMS: readonly string[] = [
  'agent-protocol',
  'cron',
  'fair-share',
  'job-reconcile',
  'node-health',
  'placement',
  'workflows',
];

const cache = new Map<string, string>();
/** Each loaded file's name, by its text. */
const names = new Map<string, string>();

/**
 * Where the query `<dir>/<name>` lives: src/<dir>/sql/<name>.sql when <dir> is a subsystem, else
 * src/store/sql/<dir>/<name>.sql (under dist/ after a build, at the same places).
 */
export function sqlFile(name: string): URL {
  const slash = name.indexOf('/');
  const dir = name.slice(0, slash);
  if (slash > 0 && SQL_SUBSYSTEMS.includes(dir))
    return new URL(`../${dir}/sql/${name.slice(slash + 1)}.sql`, import.meta.url);
  return new URL(`./sql/${name}.sql`, import.meta.url);
}

/** The text of the query `name` (sqlFile says which file). */
export function sql(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(sqlFile(name), 'utf8');
    cache.set(name, text);
    names.set(text, name);
  }
  return text;
}

/** The name of the .sql file a statement's text was loaded from, if it was. */
export function statementName(text: string): string | undefined {
  return names.get(text);
}
