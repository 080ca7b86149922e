import { describe, expect, it } from 'vitest';
import { findCycle } from '../../src/workflows/dag.js';
import {
  NODE_CPU_MILLIS,
  NODE_MEMORY_BYTES,
  STRATEGIES,
  generateWorkflows,
  lowerBound,
  simulateWorkflows,
  type MakespanResult,
  type Workflow,
  type WorkflowJob,
} from '../../src/bench/workflow-makespan.js';

// Small enough to read a failure, large enough that jobs queue: 6 workflows on 2 nodes.
const cases = [1, 2, 3].flatMap((seed) =>
  STRATEGIES.map((strategy) => ({ seed, strategy, name: `seed ${seed}, ${strategy.name}` })),
);

function jobsOf(workflows: readonly Workflow[]) {
  return new Map<string, WorkflowJob & { workflow: string }>(
    workflows.flatMap((w) => w.jobs.map((j) => [`${w.name}/${j.name}`, { ...j, workflow: w.name }])),
  );
}

/** The largest CPU and memory in use on any node at any instant (a job holds [start, end)). */
function peakUse(result: MakespanResult, workflows: readonly Workflow[]): { cpu: number; memory: number } {
  const jobs = jobsOf(workflows);
  const peak = { cpu: 0, memory: 0 };
  const byNode = new Map<string, MakespanResult['runs']>();
  for (const r of result.runs) byNode.set(r.node, [...(byNode.get(r.node) ?? []), r]);
  for (const runs of byNode.values()) {
    for (const at of runs.map((r) => r.startMs)) {
      const live = runs.filter((r) => r.startMs <= at && at < r.endMs).map((r) => jobs.get(r.uid)!);
      peak.cpu = Math.max(
        peak.cpu,
        live.reduce((s, j) => s + j.cpuMillis, 0),
      );
      peak.memory = Math.max(
        peak.memory,
        live.reduce((s, j) => s + j.memoryBytes, 0),
      );
    }
  }
  return peak;
}

describe('the workflow generator', () => {
  it('is the same for the same seed, acyclic, with needs on earlier jobs only', () => {
    const workflows = generateWorkflows({ workflows: 20, seed: 9 });
    expect(generateWorkflows({ workflows: 20, seed: 9 })).toEqual(workflows);
    expect(generateWorkflows({ workflows: 20, seed: 10 })).not.toEqual(workflows);
    for (const w of workflows) {
      expect(w.jobs.length).toBeGreaterThanOrEqual(4);
      expect(w.jobs.length).toBeLessThanOrEqual(25);
      expect(findCycle(w.jobs)).toBeNull();
      w.jobs.forEach((j, i) => {
        for (const need of j.needs) expect(w.jobs.findIndex((k) => k.name === need)).toBeLessThan(i);
        expect(j.durationMs).toBeGreaterThanOrEqual(1000);
        expect(j.durationMs).toBeLessThanOrEqual(60_000);
        expect(j.cpuMillis).toBeLessThanOrEqual(2000);
        expect(j.memoryBytes).toBeLessThanOrEqual(4 * 1024 ** 3);
      });
    }
  });
});

describe('the workflow simulation', () => {
  it.each(cases)(
    '$name: runs every job once, within capacity, after its needs, no sooner than the lower bound',
    ({ seed, strategy }) => {
      const workflows = generateWorkflows({ workflows: 6, seed });
      const result = simulateWorkflows(workflows, 2, strategy);
      const jobs = jobsOf(workflows);
      const runs = new Map(result.runs.map((r) => [r.uid, r]));
      expect(result.runs).toHaveLength(jobs.size);
      expect(runs.size).toBe(jobs.size);

      const peak = peakUse(result, workflows);
      expect(peak.cpu).toBeLessThanOrEqual(NODE_CPU_MILLIS);
      expect(peak.memory).toBeLessThanOrEqual(NODE_MEMORY_BYTES);

      for (const [uid, job] of jobs) {
        const run = runs.get(uid)!;
        expect(run.endMs - run.startMs).toBe(job.durationMs);
        for (const need of job.needs)
          expect(run.startMs).toBeGreaterThanOrEqual(runs.get(`${job.workflow}/${need}`)!.endMs);
      }

      const bound = lowerBound(workflows, 2);
      expect(result.makespanMs).toBe(Math.max(...result.runs.map((r) => r.endMs)));
      expect(result.makespanMs).toBeGreaterThanOrEqual(bound.ms);
      expect(bound.ms).toBe(Math.max(bound.criticalPathMs, bound.workMs));
      expect(result.meanCompletionMs).toBeLessThanOrEqual(result.makespanMs);
    },
  );

  it('starts a job the moment its last need ends when the cluster has room for everything', () => {
    // On 200 nodes nothing waits for room: every workflow ends at its own critical path.
    const workflows = generateWorkflows({ workflows: 6, seed: 4 });
    const result = simulateWorkflows(workflows, 200, STRATEGIES[0]!);
    expect(result.makespanMs).toBe(lowerBound(workflows, 200).criticalPathMs);
  });
});
