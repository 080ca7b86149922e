// Runtime code never builds SQL: every query lives in a .sql file under src/store/sql/,
// named by what it does, with a header comment giving its parameters. Only the brackets of a
// transaction stay in the store's transaction helpers (db.ts, rehearsal.ts);
// test/unit/sql-in-files.test.ts keeps it so.
import { readFileSync } from 'node:fs';

const cache = new Map<string, string>();
/** Each loaded file's name, by its text. */
const names = new Map<string, string>();

/** The text of src/store/sql/<name>.sql (dist/store/sql/ after a build). */
export function sql(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), 'utf8');
    cache.set(name, text);
    names.set(text, name);
  }
  return text;
}

/** The name of the .sql file a statement's text was loaded from, if it was. */
export function statementName(text: string): string | undefined {
  return names.get(text);
}
