// tsc emits only JavaScript; the SQL files read at run time (src/store/sql/, and each subsystem's
// sql/ folder: src/store/sql.ts finds them at the same places under dist/), and the dashboard's
// page and style sheet, travel beside it.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function copyAssets(from, to) {
  for (const entry of readdirSync(from)) {
    const source = join(from, entry);
    const target = join(to, entry);
    if (statSync(source).isDirectory()) copyAssets(source, target);
    else if (/\.(sql|html|css)$/.test(entry)) cpSync(source, target);
  }
}
copyAssets('src', 'dist');
