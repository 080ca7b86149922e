import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The directory of fencer's package.json. Found by walking up from this module rather than
 * from the working directory, so it is the same under vitest (src/) and after `tsc` (dist/),
 * wherever the process was started.
 */
export function projectRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (isFencerPackage(join(dir, 'package.json'))) return (cached = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no fencer package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

function isFencerPackage(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'fencer';
  } catch {
    return false;
  }
}
