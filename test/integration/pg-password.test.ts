// The embedded PostgreSQL of a local cluster (issue 27 part 8): a random password made once per
// cluster home, in a file only its owner reads, never `fencer`, never in cluster.json, never on a
// replica's command line; the home's next cluster uses the same one.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { databaseUrlOf, readClusterState, statePath } from '../../src/simulator/state.js';

const home = mkdtempSync(join(tmpdir(), 'fencer-pg-password-'));
const passwordFile = join(home, 'auth', 'postgres.password');

async function connects(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

afterAll(() => rmSync(home, { recursive: true, force: true }));

// A DATABASE_URL given to the run overrides the embedded PostgreSQL, as it does for `cluster up`.
describe.skipIf(!!process.env.DATABASE_URL)("a local cluster's embedded PostgreSQL", () => {
  it('has a random password of the home, mode 0600, in no world-readable file, on no command line, reused by the next cluster', async () => {
    let password: string;
    let cluster = await Cluster.start({ replicas: 1, nodes: 0, home, timings: DEFAULT_TIMINGS });
    try {
      password = readFileSync(passwordFile, 'utf8').trim();
      expect(password.length).toBeGreaterThanOrEqual(40);
      expect(password).not.toBe('fencer');
      expect(statSync(passwordFile).mode & 0o077).toBe(0);
      expect(new URL(cluster.databaseUrl).password).toBe(password);

      const state = readClusterState(home)!;
      expect(statSync(statePath(home)).mode & 0o077).toBe(0);
      expect(readFileSync(statePath(home), 'utf8')).not.toContain(password);
      expect(new URL(state.databaseUrl).password).toBe('');
      expect(state.databasePasswordFile).toBe(passwordFile);
      expect(await connects(databaseUrlOf(state))).toBe(true);
      const guessed = new URL(state.databaseUrl);
      guessed.password = 'fencer';
      expect(await connects(guessed.toString())).toBe(false);

      const pid = cluster.pid('replica-1')!;
      const cmdline = `/proc/${pid}/cmdline`;
      if (existsSync(cmdline)) expect(readFileSync(cmdline, 'utf8')).not.toContain(password);
    } finally {
      await cluster.stop();
    }
    cluster = await Cluster.start({ replicas: 1, nodes: 0, home, timings: DEFAULT_TIMINGS });
    try {
      expect(new URL(cluster.databaseUrl).password).toBe(password);
    } finally {
      await cluster.stop();
    }
  });
});
