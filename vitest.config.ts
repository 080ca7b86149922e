import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Files that start clusters of real processes (the local cluster, or a campaign on one) wait on
// real timeouts (a lease, a silence window, Patroni's ttl, a job's length) far more than they
// compute: an idle cluster costs a seventh of a core. They run three at a time, after the rest,
// campaigns first (the longest; a fresh clone has no timings of its own and would start the
// smallest files last). Files whose verdict rests on the machine's own timing run one at a time
// with the machine to themselves, last: those that make the control plane slow on purpose against
// its deadlines (the overload faults: setFaults, or a campaign's `faults: true`), benchmarks, and
// kube-events-low-water, which reads a server-wide position (pg_snapshot_xmax moves with other
// files' transactions). Three at a time, lag and overload failed (a claim past its confirm
// timeout, a node fenced by slow reports). The rest (pure units, replicas in process) run two at
// a time, first: a third worker gained nothing.
const CLUSTER = /from '\.\.\/\.\.\/src\/(simulator\/local-cluster|chaos\/campaign)\.js'/;
const CAMPAIGN = /from '\.\.\/\.\.\/src\/chaos\/campaign\.js'/;
const ALONE = /from '\.\.\/\.\.\/src\/bench\/[a-z-]+\.js'|pg_snapshot_xmax|setFaults|faults: true/;
const integration = 'test/integration';
const files = readdirSync(integration)
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => ({ path: `${integration}/${f}`, text: readFileSync(join(integration, f), 'utf8') }));
const alone = files.filter((f) => ALONE.test(f.text)).map((f) => f.path);
const clusters = files.filter((f) => !ALONE.test(f.text) && CLUSTER.test(f.text)).map((f) => f.path);
const campaigns = new Set(files.filter((f) => CAMPAIGN.test(f.text)).map((f) => f.path));

/** vitest's order (groups; then failed, then longest, by its timings of past runs), campaigns first in their group. */
class CampaignsFirst extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(specs);
    const isCampaign = (spec: TestSpecification) => [...campaigns].some((path) => spec.moduleId.endsWith(`/${path}`));
    const key = (spec: TestSpecification, index: number) => ({
      group: sorted.findIndex((other) => other.project.name === spec.project.name),
      first: isCampaign(spec) ? 0 : 1,
      index,
    });
    return sorted
      .map(key)
      .sort((a, b) => a.group - b.group || a.first - b.first || a.index - b.index)
      .map((k) => sorted[k.index]!);
  }
}

export default defineConfig({
  test: {
    // Once for the run, whichever project a file is in.
    globalSetup: ['test/helpers/global-setup.ts'],
    // Authentication is on in every test: clients send the run's admin token (FENCER_TOKEN).
    setupFiles: ['test/helpers/setup-auth.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    sequence: { sequencer: CampaignsFirst },
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
