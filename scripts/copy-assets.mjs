// tsc emits only JavaScript; the SQL files the store reads at run time travel beside it.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function copySql(from, to) {
  for (const entry of readdirSync(from)) {
    const source = join(from, entry);
    const target = join(to, entry);
    if (statSync(source).isDirectory()) copySql(source, target);
    else if (entry.endsWith('.sql')) cpSync(source, target);
  }
}
copySql('src', 'dist');
