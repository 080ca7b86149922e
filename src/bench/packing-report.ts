// The packing benchmark's results page (markdown) and its plot (SVG).
import { policyName } from '../placement/policies.js';
import { machine } from '../report/results.js';
import { lineChart } from './plot.js';
import type { PackingResult } from './packing.js';
import type { Verdict } from '../checker/check.js';
import type { LatencySummary } from './placement-metrics.js';

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const millis = (ms: number | null) => (ms === null ? 'n/a' : `${ms.toFixed(2)} ms`);

export function packingPlot(result: PackingResult): string {
  const total = result.options.jobs;
  return lineChart(
    `Packing ${total} jobs on ${result.options.nodes} nodes (${result.runtime}), ${policyName(result.options.policy)}`,
    'seconds since the backlog was accepted',
    [
      { label: 'CPU allocated', colour: '#1f77b4', points: result.samples.map((s) => [s.atMs / 1000, s.cpuUse]) },
      { label: 'memory allocated', colour: '#2ca02c', points: result.samples.map((s) => [s.atMs / 1000, s.memoryUse]) },
      {
        label: 'jobs pending',
        colour: '#888',
        dashed: true,
        points: result.samples.map((s) => [s.atMs / 1000, s.pending / total]),
      },
    ],
  );
}

export function packingReport(result: PackingResult, command: string, date: Date, plotFile: string): string {
  const o = result.options;
  const ratio = result.finishMs / result.lowerBoundMs;
  const timing = (label: string, t: LatencySummary) =>
    `| ${label} | ${t.count} | ${millis(t.meanMs)} | ${millis(t.p50Ms)} | ${millis(t.p99Ms)} |`;
  const lines = [
    `# Packing benchmark, ${date.toISOString().slice(0, 10)}`,
    '',
    `- command: \`${command}\``,
    `- machine: ${machine()}`,
    `- date: ${date.toISOString()}`,
    `- cluster: ${o.replicas} replicas, ${o.nodes} nodes of 16 CPU / 64 GiB${o.nodesPerProcess > 1 ? ` (${o.nodesPerProcess} per agent ${result.runtime === 'docker' ? 'container' : 'process'})` : ''}, ${result.runtime} runtime${result.runtimeNote ? ` (${result.runtimeNote})` : ''}, embedded PostgreSQL`,
    `- workload: ${o.jobs} jobs, seed ${o.seed} (src/bench/workload.ts), durations divided by ${o.timeScale} (30 s–10 min become ${30 / o.timeScale} s–${600 / o.timeScale} s)`,
    `- placement policy: ${policyName(o.policy)}`,
    `- the backlog went in as ${result.submitRequests} requests back to back over the replicas (the last answered ${seconds(result.submitMs)} after the first); the clock starts when the first was answered`,
    '',
    '| | |',
    '|---|---|',
    `| CPU use while jobs waited (allocated / capacity) | ${pct(result.cpuUseWhileWaiting)} |`,
    `| memory use while jobs waited | ${pct(result.memoryUseWhileWaiting)} |`,
    `| time to finish every job | ${seconds(result.finishMs)} |`,
    `| lower bound (max of CPU-seconds / CPU, memory-seconds / memory, longest job) | ${seconds(result.lowerBoundMs)} |`,
    `| time to finish / lower bound | ${ratio.toFixed(3)} |`,
    `| jobs per second | ${(o.jobs / (result.finishMs / 1000)).toFixed(1)} |`,
    `| jobs by final phase | ${JSON.stringify(result.phases)} |`,
    `| checker (history and node logs): placed twice / run twice at once / node over capacity / lost / early | ${verdictLine(result.verdict)} |`,
    `| nodes' self-fences (cut off: a replica's keepalives and heartbeat answers stopped) | ${result.stalls.selfFences} |`,
    `| worst event-loop delay: replicas max / p99, agents max | ${millis(result.stalls.replicaLagMaxMs)} / ${millis(result.stalls.replicaLagP99Ms)}, ${millis(result.stalls.agentLagMaxMs)} |`,
    `| heartbeats, sent to answered, p50 / p99 (${result.stalls.heartbeats.count} answered) | ${millis(result.stalls.heartbeats.p50Ms)} / ${millis(result.stalls.heartbeats.p99Ms)} |`,
    `| placement committed → start report applied, p50 / p99 | ${seconds(result.overhead.toStartP50Ms)} / ${seconds(result.overhead.toStartP99Ms)} |`,
    `| resources held beyond the job's run (placement to finish report), p50 / p99 | ${seconds(result.overhead.beyondRunP50Ms)} / ${seconds(result.overhead.beyondRunP99Ms)} |`,
    `| share of allocated node-time beyond the runs (the simulation has none) | ${pct(result.overhead.shareOfHeld)} |`,
    '',
    "Placement rounds (from the replicas' /metrics histograms; a round is one pass that found pending jobs; p50 and p99 estimated within a bucket, as histogram_quantile does):",
    '',
    '| | rounds | mean | p50 | p99 |',
    '|---|---|---|---|---|',
    timing('decision alone (jobs and nodes in, placements out)', result.decide),
    timing('whole round (read, decide, fenced commit)', result.round),
    '',
    `![CPU and memory use over time](${plotFile})`,
    '',
  ];
  if (result.simulations.length > 0) {
    lines.push(
      '## Policies compared (simulation)',
      '',
      `The same workload replayed against the placement algorithm in simulated time (src/bench/packing-simulation.ts: a round every 100 ms, no I/O), once per policy. The default is the best of these.`,
      '',
      '| policy | finish / lower bound | CPU use while waiting | memory use while waiting | mean wait |',
      '|---|---|---|---|---|',
      ...result.simulations.map(
        (s) =>
          `| ${policyName(s.policy)} | ${(s.finishMs / s.lowerBoundMs).toFixed(3)} | ${pct(s.cpuUseWhileWaiting)} | ${pct(s.memoryUseWhileWaiting)} | ${seconds(s.meanWaitMs)} |`,
      ),
      '',
    );
  }
  return lines.join('\n');
}

function verdictLine(v: Verdict): string {
  const counts = `${v.placedTwice} / ${v.overlappingRuns} / ${v.overcommitted} / ${v.lost} / ${v.early} (${v.runs} runs)`;
  return v.ok ? `${counts}: clean` : `${counts}: **VIOLATION**`;
}
