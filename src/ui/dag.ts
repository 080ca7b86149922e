// Where a workflow's jobs go in its picture: one column per stage (the stages the API computes,
// so a job stands right of everything it needs), one row per job within its column; an edge from
// each need to the job that needs it.
export interface DagBox {
  name: string;
  phase: string;
  x: number;
  y: number;
}

export interface DagEdge {
  from: DagBox;
  to: DagBox;
}

export const BOX = { width: 120, height: 24, gapX: 36, gapY: 10 };

export function layoutDag(
  jobs: ReadonlyArray<{ name: string; stage: number; phase: string }>,
  needs: ReadonlyMap<string, readonly string[]>,
): { boxes: DagBox[]; edges: DagEdge[]; width: number; height: number } {
  const rows = new Map<number, number>();
  const boxes = new Map<string, DagBox>();
  for (const job of [...jobs].sort((a, b) => a.stage - b.stage || a.name.localeCompare(b.name))) {
    const row = rows.get(job.stage) ?? 0;
    rows.set(job.stage, row + 1);
    boxes.set(job.name, {
      name: job.name,
      phase: job.phase,
      x: job.stage * (BOX.width + BOX.gapX),
      y: row * (BOX.height + BOX.gapY),
    });
  }
  const edges: DagEdge[] = [];
  for (const [name, needed] of needs) {
    const to = boxes.get(name);
    for (const need of needed) {
      const from = boxes.get(need);
      if (from && to) edges.push({ from, to });
    }
  }
  const all = [...boxes.values()];
  return {
    boxes: all,
    edges,
    width: Math.max(0, ...all.map((b) => b.x + BOX.width)),
    height: Math.max(0, ...all.map((b) => b.y + BOX.height)),
  };
}
