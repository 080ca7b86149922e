// The placement-at-scale results page.
import { policyName } from '../placement/policies.js';
import { machine, percentile } from '../report/results.js';
import type { ScaleResult } from './placement-scale.js';
import type { CommitRateResult } from './commit-rate.js';

const ms = (v: number | null) => (v === null ? 'n/a' : v.toFixed(2));

export function placementReport(scale: ScaleResult[], commit: CommitRateResult, command: string, date: Date): string {
  const perSecond = commit.placed / (commit.elapsedMs / 1000);
  return [
    `# Placement at scale, ${date.toISOString().slice(0, 10)}`,
    '',
    `- command: \`${command}\``,
    `- machine: ${machine()}`,
    `- date: ${date.toISOString()}`,
    '',
    '## The algorithm alone (no I/O)',
    '',
    'Seeded jobs from the packing workload (src/bench/workload.ts) on nodes of 16 CPU / 64 GiB. The first round meets empty nodes; every later round first lets 2 % of the running jobs finish and then places into the room they left, with every other job still pending (src/bench/placement-scale.ts). Times are the decision only: jobs and nodes in, placements out. Rows marked fair share are the round the leader runs by default: every job in one queue, queues sharing by weight, and a waiting reason asked for each job left (src/fair-share/share-order.ts).',
    '',
    '| pending × nodes | policy | first round ms (placed) | steady round p50 ms | p99 ms | max ms | placed per round |',
    '|---|---|---|---|---|---|---|',
    ...scale.map(
      (r) =>
        `| ${r.pending.toLocaleString('en')} × ${r.nodes.toLocaleString('en')} | ${policyName(r.policy)}${r.fairShare ? ', fair share (one queue, as the leader runs it)' : ''} | ${ms(r.firstRoundMs)} (${r.firstRoundPlaced}) | ${ms(percentile(r.roundMs, 50))} | ${ms(percentile(r.roundMs, 99))} | ${ms(Math.max(...r.roundMs))} | ${r.placedPerRound.toFixed(0)} |`,
    ),
    '',
    '## Committed placements against PostgreSQL',
    '',
    `${commit.nodes.toLocaleString('en')} nodes simulated in one process (registered and watching through the store, as a replica records real agents), ${commit.jobs.toLocaleString('en')} pending jobs, one leader holding the lease; its placement controller reconciles until nothing more is placed. Each round reads up to 10,000 pending jobs and every node, decides, and commits all its placements in one fenced statement (embedded PostgreSQL on this machine).`,
    '',
    '| | |',
    '|---|---|',
    `| placements committed | ${commit.placed.toLocaleString('en')} in ${commit.rounds.length} rounds |`,
    `| time in rounds (read, decide, fenced commit) | ${(commit.elapsedMs / 1000).toFixed(2)} s |`,
    `| committed placements per second | ${Math.round(perSecond).toLocaleString('en')} |`,
    `| rounds | ${commit.rounds.map((r) => `${r.placed} in ${r.ms.toFixed(0)} ms`).join('; ')} |`,
    `| jobs placed twice (history) | ${commit.placedTwice} |`,
    '',
  ].join('\n');
}
