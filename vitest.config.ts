import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Files that start clusters of real processes (those importing the local cluster) wait on real
// timeouts (a lease, a silence window, Patroni's ttl, a job's length) far more than they compute:
// an idle cluster costs a seventh of a core. They run three at a time, after the rest. Files
// whose verdict rests on the machine's own timing, or that load it, run one at a time with the
// machine to themselves, last: those that make the control plane slow on purpose against its
// deadlines (the overload faults, setFaults), campaigns (a campaign on HA PostgreSQL beside two
// cluster files took twice as long and slowed them), benchmarks, and kube-events-low-water, which
// reads a server-wide position (pg_snapshot_xmax moves with other files' transactions). Three at
// a time, lag and overload failed (a claim past its confirm timeout, a node fenced by slow
// reports). The rest (pure units, replicas in process) run two at a time, first: a third worker
// gained nothing.
const CLUSTER = /from '\.\.\/\.\.\/src\/simulator\/local-cluster\.js'/;
const ALONE = /from '\.\.\/\.\.\/src\/(chaos\/campaign|bench\/[a-z-]+)\.js'|pg_snapshot_xmax|setFaults/;
const integration = 'test/integration';
const files = readdirSync(integration)
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => ({ path: `${integration}/${f}`, text: readFileSync(join(integration, f), 'utf8') }));
const alone = files.filter((f) => ALONE.test(f.text)).map((f) => f.path);
const clusters = files.filter((f) => !ALONE.test(f.text) && CLUSTER.test(f.text)).map((f) => f.path);

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
          exclude: [...alone, ...clusters],
          maxWorkers: 2,
          // The files of a worker share its modules, imported once: most of these files take less
          // time than a fresh import did. A file that changes process.env puts it back.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'clusters', include: clusters, maxWorkers: 3, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: { name: 'alone', include: alone, fileParallelism: false, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
