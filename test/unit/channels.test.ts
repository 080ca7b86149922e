// The NOTIFY channels named in SQL (every .sql file under src/: the subsystems' sql/ folders,
// src/store/sql, src/store/migrations) are exactly those of src/store/channels.ts: a channel
// renamed on one side only would leave its listener deaf.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHANNELS, pendingChanges } from '../../src/store/channels.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const STORE = join(SRC, 'store');

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sqlFiles(path);
    return entry.name.endsWith('.sql') ? [path] : [];
  });
}

/** Every channel a statement notifies: pg_notify('name', …) and NOTIFY name. */
function channelsNamed(text: string): string[] {
  const code = text.replace(/--.*$/gm, ''); // comments may name channels in prose
  return [...code.matchAll(/pg_notify\(\s*'([a-z_]+)'|\bNOTIFY\s+([a-z_]+)/gi)].map((m) => m[1] ?? m[2]!);
}

describe('NOTIFY channels', () => {
  const files = sqlFiles(SRC);
  const named = new Set(files.flatMap((file) => channelsNamed(readFileSync(file, 'utf8'))));

  it('finds the SQL that sends them', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(channelsNamed("SELECT pg_notify('fencer_x', '') -- pg_notify('fencer_y')\nNOTIFY fencer_z")).toEqual([
      'fencer_x',
      'fencer_z',
    ]);
  });

  it('every channel the SQL names is a constant', () => {
    const known = new Set<string>(Object.values(CHANNELS));
    expect([...named].filter((channel) => !known.has(channel))).toEqual([]);
  });

  it('every constant is sent by some SQL', () => {
    expect(Object.values(CHANNELS).filter((channel) => !named.has(channel))).toEqual([]);
  });

  it('the listener hears every constant (sql/listener/listen.sql)', () => {
    const text = readFileSync(join(STORE, 'sql/listener/listen.sql'), 'utf8').replace(/--.*$/gm, '');
    const heard = [...text.matchAll(/\bLISTEN\s+([a-z_]+)/g)].map((m) => m[1]!);
    expect(heard.sort()).toEqual(Object.values(CHANNELS).sort());
  });

  it('reads the uids of a fencer_pending payload', () => {
    expect(pendingChanges('a')).toEqual({ pending: ['a'], left: [] });
    expect(pendingChanges('a,-b,c')).toEqual({ pending: ['a', 'c'], left: ['b'] });
    expect(pendingChanges('-a')).toEqual({ pending: [], left: ['a'] });
    expect(pendingChanges('')).toEqual({ pending: [], left: [] });
  });
});
