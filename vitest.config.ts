import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Files that start clusters of real processes (or run campaigns, or measure) wait on real
// timeouts whose margins are the machine's, and kube-events-low-water reads a server-wide
// position (pg_snapshot_xmax moves with other files' transactions): each runs with the machine to
// itself, one at a time, after the rest. Paired with another file, such a file took twice as
// long and one missed its deadline. The rest (pure units, replicas in process) run two at a time.
const ALONE = /from '\.\.\/\.\.\/src\/(simulator\/local-cluster|chaos\/campaign|bench\/[a-z-]+)\.js'|pg_snapshot_xmax/;
const integration = 'test/integration';
const alone = readdirSync(integration)
  .filter((f) => f.endsWith('.test.ts') && ALONE.test(readFileSync(join(integration, f), 'utf8')))
  .map((f) => `${integration}/${f}`);

export default defineConfig({
  test: {
    // Once for the run, whichever project a file is in.
    globalSetup: ['test/helpers/global-setup.ts'],
    // Authentication is on in every test: clients send the run's admin token (FENCER_TOKEN).
    setupFiles: ['test/helpers/setup-auth.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'two-at-a-time',
          include: ['test/**/*.test.ts'],
          exclude: alone,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'alone', include: alone, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
