// The workflow makespan benchmark's results page (markdown).
import { policyName } from '../placement/policies.js';
import { machine } from '../report/results.js';
import { NODE_CPU_MILLIS, NODE_MEMORY_BYTES, STRATEGIES, type WorkflowCase } from './workflow-makespan.js';

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

export function workflowReport(
  cases: readonly WorkflowCase[],
  options: { workflows: number; nodes: number },
  command: string,
  date: Date,
): string {
  const perStrategy = STRATEGIES.map((strategy, s) => {
    const ratios = cases.map((c) => c.results[s]!.makespanMs / c.lowerBound.ms);
    // Against arrival order on the same workflows: below 1 is shorter.
    const versusArrival = cases.map((c) => c.results[s]!.makespanMs / c.results[STRATEGIES.length - 1]!.makespanMs);
    return {
      strategy,
      ratio: mean(ratios),
      worst: Math.max(...ratios),
      versusArrival: mean(versusArrival),
      completionMs: mean(cases.map((c) => c.results[s]!.meanCompletionMs)),
      wins: cases.filter((c) => c.results[s]!.makespanMs <= Math.min(...c.results.map((r) => r.makespanMs))).length,
    };
  });
  return [
    `# Workflow makespan: critical-path-first against arrival order, ${date.toISOString().slice(0, 10)}`,
    '',
    `- command: \`${command}\` (or \`node dist/cli/main.js bench workflows …\`)`,
    `- machine: ${machine()}`,
    `- date: ${date.toISOString()}`,
    `- cluster: ${options.nodes} nodes of ${NODE_CPU_MILLIS / 1000} CPU / ${NODE_MEMORY_BYTES / 1024 ** 3} GiB, simulated (src/bench/workflow-makespan.ts): the real placement round (bestFit) at time 0 and at every job end, over the ready jobs in arrival order; no I/O`,
    `- workflows: ${options.workflows} per seed, all submitted at 0, layered random DAGs of 4–25 jobs; durations 1–60 s (bounded Pareto, median 2 s), 250m–2 CPU, 256 MiB–4 GiB`,
    '- lower bound: the larger of the longest critical path of any workflow and all the work in the dominant resource over the cluster (max over CPU and memory of Σ size × duration / capacity)',
    '- orderings: ' +
      STRATEGIES.map(
        (s) => `**${s.name}** (${policyName(s.policy)}${s.withPath ? ', each job weighed by its remaining path' : ''})`,
      ).join('; '),
    '',
    '## Over all seeds',
    '',
    "| ordering | makespan ÷ lower bound, mean | worst | makespan ÷ arrival's, mean | shortest makespan (seeds) | mean workflow completion, mean over seeds (s) |",
    '|---|---|---|---|---|---|',
    ...perStrategy.map(
      (p) =>
        `| ${p.strategy.name} | ${p.ratio.toFixed(3)} | ${p.worst.toFixed(3)} | ${p.versusArrival.toFixed(3)} | ${p.wins} of ${cases.length} | ${seconds(p.completionMs)} |`,
    ),
    '',
    '## Per seed',
    '',
    '| seed | jobs | lower bound s (critical path / work) | ordering | makespan s | ÷ lower bound | mean workflow completion s |',
    '|---|---|---|---|---|---|---|',
    ...cases.flatMap((c) =>
      c.results.map(
        (r, s) =>
          `| ${s === 0 ? c.seed : ''} | ${s === 0 ? c.jobs : ''} | ${s === 0 ? `${seconds(c.lowerBound.ms)} (${seconds(c.lowerBound.criticalPathMs)} / ${seconds(c.lowerBound.workMs)})` : ''} | ${r.strategy.name} | ${seconds(r.makespanMs)} | ${(r.makespanMs / c.lowerBound.ms).toFixed(3)} | ${seconds(r.meanCompletionMs)} |`,
      ),
    ),
    '',
  ].join('\n');
}
