// A workflow's jobs as a graph, pure: plain data in, answers out. An edge runs from a need to
// the job that waits on it. Every function is linear in jobs + needs.

export interface DagJob {
  name: string;
  needs: readonly string[];
  durationMs: number;
}

/**
 * A cycle, as the names along it with the first repeated at the end (`build → test → build`
 * is ['build', 'test', 'build']), or null. Three-colour depth-first search: a need that is
 * still on the path (grey) closes a cycle. Needs on unknown jobs are ignored (reported apart).
 * Iterative, so a long chain cannot overflow the stack.
 */
export function findCycle(jobs: readonly DagJob[]): string[] | null {
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const colour = new Map<string, 'grey' | 'black'>();
  for (const root of jobs) {
    if (colour.has(root.name)) continue;
    const path: string[] = [root.name];
    const next: number[] = [0];
    colour.set(root.name, 'grey');
    while (path.length > 0) {
      const name = path[path.length - 1]!;
      const needs = byName.get(name)!.needs;
      const i = next[next.length - 1]!;
      if (i === needs.length) {
        colour.set(name, 'black');
        path.pop();
        next.pop();
        continue;
      }
      next[next.length - 1] = i + 1;
      const need = needs[i]!;
      if (!byName.has(need)) continue;
      const seen = colour.get(need);
      if (seen === 'grey') {
        // The path runs need-ward; the cycle is written the way work flows, need to dependent.
        return [need, ...path.slice(path.indexOf(need) + 1).reverse(), need];
      }
      if (seen === undefined) {
        colour.set(need, 'grey');
        path.push(need);
        next.push(0);
      }
    }
  }
  return null;
}

/**
 * Each job's stage by Kahn's algorithm: stage 0 needs nothing, stage k needs something of stage
 * k-1 and nothing later. Assumes no cycle (jobs on one are left out).
 */
export function stages(jobs: readonly DagJob[]): Map<string, number> {
  const dependents = dependentsOf(jobs);
  const waiting = new Map(jobs.map((j) => [j.name, j.needs.filter((n) => dependents.has(n)).length]));
  const stage = new Map<string, number>();
  let frontier = jobs.filter((j) => waiting.get(j.name) === 0).map((j) => j.name);
  for (let k = 0; frontier.length > 0; k++) {
    const following: string[] = [];
    for (const name of frontier) {
      stage.set(name, k);
      for (const d of dependents.get(name)!) {
        const left = waiting.get(d)! - 1;
        waiting.set(d, left);
        if (left === 0) following.push(d);
      }
    }
    frontier = following;
  }
  return stage;
}

/**
 * The independent parts (weakly connected components) by union-find with path halving and union
 * by size: a failure in one part can never skip a job of another. Each part lists its jobs in
 * the workflow's order; parts come in the order of their first job.
 */
export function components(jobs: readonly DagJob[]): string[][] {
  const index = new Map(jobs.map((j, i) => [j.name, i]));
  const parent = jobs.map((_, i) => i);
  const size = jobs.map(() => 1);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  jobs.forEach((job, i) => {
    for (const need of job.needs) {
      const j = index.get(need);
      if (j === undefined) continue;
      let a = find(i);
      let b = find(j);
      if (a === b) continue;
      if (size[a]! < size[b]!) [a, b] = [b, a];
      parent[b] = a;
      size[a]! += size[b]!;
    }
  });
  const parts = new Map<number, string[]>();
  jobs.forEach((job, i) => {
    const root = find(i);
    const part = parts.get(root) ?? [];
    part.push(job.name);
    parts.set(root, part);
  });
  return [...parts.values()];
}

/**
 * For each job, its own duration plus the longest chain of durations of the jobs that wait on it
 * (directly or not): how long the workflow needs at least once this job may start. Placement
 * starts the job with the longest one first. Assumes no cycle.
 */
export function remainingPathMs(jobs: readonly DagJob[]): Map<string, number> {
  const dependents = dependentsOf(jobs);
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const order = [...stages(jobs).entries()].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  const path = new Map<string, number>();
  for (const name of order) {
    let longest = 0;
    for (const d of dependents.get(name)!) longest = Math.max(longest, path.get(d)!);
    path.set(name, byName.get(name)!.durationMs + longest);
  }
  return path;
}

/** The longest chain of durations through the whole workflow: no schedule finishes sooner. */
export function criticalPathMs(jobs: readonly DagJob[]): number {
  let longest = 0;
  for (const ms of remainingPathMs(jobs).values()) longest = Math.max(longest, ms);
  return longest;
}

function dependentsOf(jobs: readonly DagJob[]): Map<string, string[]> {
  const dependents = new Map<string, string[]>(jobs.map((j) => [j.name, []]));
  for (const job of jobs) for (const need of job.needs) dependents.get(need)?.push(job.name);
  return dependents;
}
