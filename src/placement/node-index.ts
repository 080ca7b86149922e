// Nodes indexed by free capacity, so a round finds the best node for a job without looking at
// every node: 100,000 pending jobs on 5,000 nodes in well under 100 ms.
//
// Nodes of one capacity (a *shape*) sit in a GRID × GRID table of cells by free CPU and free
// memory (as shares of the node). A job looks at the cells that could hold it, nearest first
// (by how much the cell would leave free), and stops as soon as no farther cell could beat the
// best node found: the answer is the exact best fit, not an approximation. Inside a cell, nodes
// with the very same free capacity share one entry, so 5,000 empty nodes cost one comparison.
// A node with no free slot left (it holds its most jobs at once, or its unclaimed backlog is
// full) has room for no job of any size: it leaves the table.
import { fitScore, type FitRule } from './policies.js';
import type { NodeCapacity, PendingJob } from './types.js';

/** What a search needs of a job: its size. */
export type Demand = Pick<PendingJob, 'cpuMillis' | 'memoryBytes'>;

const GRID = 32;

export interface NodeState {
  readonly node: NodeCapacity;
  cpuFree: number;
  memoryFree: number;
  /** More jobs it may take this round, whatever their size. */
  slotsFree: number;
  readonly shape: Shape;
  entry: FreeEntry;
}

/** Nodes of one shape with exactly the same free capacity: interchangeable for placement. */
interface FreeEntry {
  readonly cpuFree: number;
  readonly memoryFree: number;
  readonly cell: number;
  readonly nodes: NodeState[];
}

interface Shape {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
  readonly cells: FreeEntry[][];
  /** Nodes per row of free CPU and per column of free memory: bound the search to rows and columns with any node. */
  readonly rowNodes: Int32Array;
  readonly columnNodes: Int32Array;
}

function gridCell(share: number): number {
  if (Number.isNaN(share)) return 0; // a node with no capacity of a kind (0 / 0)
  return Math.max(0, Math.min(GRID - 1, Math.floor(share * GRID)));
}

export class FreeCapacityIndex {
  readonly states: NodeState[];
  private readonly shapes: Shape[] = [];

  constructor(nodes: readonly NodeCapacity[]) {
    const byShape = new Map<string, Shape>();
    this.states = nodes.map((node) => {
      const key = `${node.cpuMillis}/${node.memoryBytes}`;
      let shape = byShape.get(key);
      if (!shape) {
        shape = {
          cpuMillis: node.cpuMillis,
          memoryBytes: node.memoryBytes,
          cells: Array.from({ length: GRID * GRID }, () => []),
          rowNodes: new Int32Array(GRID),
          columnNodes: new Int32Array(GRID),
        };
        byShape.set(key, shape);
        this.shapes.push(shape);
      }
      const state = {
        node,
        shape,
        cpuFree: 0,
        memoryFree: 0,
        slotsFree: node.freeSlots ?? Infinity,
        entry: undefined as unknown as FreeEntry,
      };
      state.cpuFree = node.cpuMillis - node.allocatedCpuMillis;
      state.memoryFree = node.memoryBytes - node.allocatedMemoryBytes;
      if (state.slotsFree > 0) this.file(state, state.cpuFree, state.memoryFree);
      return state;
    });
  }

  /** Whether some node could hold the job when empty (ignoring selectors). */
  couldEverHold(job: Demand): boolean {
    return this.shapes.some((s) => s.cpuMillis >= job.cpuMillis && s.memoryBytes >= job.memoryBytes);
  }

  /** The node that fits the job best by the rule, among all nodes; undefined when none has room. */
  best(job: Demand, fit: FitRule): NodeState | undefined {
    let best: FreeEntry | undefined;
    let bestScore = Infinity;
    for (const shape of this.shapes) {
      if (shape.cpuMillis < job.cpuMillis || shape.memoryBytes < job.memoryBytes) continue;
      const cpuShare = job.cpuMillis / shape.cpuMillis;
      const memoryShare = job.memoryBytes / shape.memoryBytes;
      const cpu0 = gridCell(cpuShare);
      const memory0 = gridCell(memoryShare);
      // Nothing beyond the fullest row and column with a node in it: a job that no node has
      // room for fails after a few cells, not the whole table.
      const cpuSpan = highest(shape.rowNodes) - cpu0;
      const memorySpan = highest(shape.columnNodes) - memory0;
      if (cpuSpan < 0 || memorySpan < 0) continue;
      for (let d = 0; d <= cpuSpan + memorySpan; d++) {
        // A cell d steps away leaves at least (d - 2) / GRID free in sum (each side may start
        // up to one cell short), and no fit rule scores a node below its sum.
        const floor = (d - 2) / GRID;
        if (floor > bestScore) break;
        for (let i = Math.max(0, d - memorySpan); i <= Math.min(d, cpuSpan); i++) {
          for (const entry of shape.cells[(cpu0 + i) * GRID + memory0 + d - i]!) {
            if (entry.cpuFree < job.cpuMillis || entry.memoryFree < job.memoryBytes) continue;
            const score = fitScore(
              fit,
              (entry.cpuFree - job.cpuMillis) / shape.cpuMillis,
              (entry.memoryFree - job.memoryBytes) / shape.memoryBytes,
            );
            if (score < bestScore) {
              bestScore = score;
              best = entry;
            }
          }
        }
      }
    }
    return best?.nodes[0];
  }

  /** The best node by the rule among those the predicate accepts: a plain scan, for selectors. */
  bestWhere(job: PendingJob, fit: FitRule, accept: (node: NodeCapacity) => boolean): NodeState | undefined {
    let best: NodeState | undefined;
    let bestScore = Infinity;
    for (const state of this.states) {
      if (
        state.slotsFree <= 0 ||
        state.cpuFree < job.cpuMillis ||
        state.memoryFree < job.memoryBytes ||
        !accept(state.node)
      )
        continue;
      const score = fitScore(
        fit,
        (state.cpuFree - job.cpuMillis) / state.shape.cpuMillis,
        (state.memoryFree - job.memoryBytes) / state.shape.memoryBytes,
      );
      if (score < bestScore) {
        bestScore = score;
        best = state;
      }
    }
    return best;
  }

  /** The job takes its room on the node; the node moves to the entry of its new free capacity (or out, with no slot left). */
  take(state: NodeState, job: PendingJob): void {
    const { entry } = state;
    entry.nodes.splice(entry.nodes.indexOf(state), 1);
    state.shape.rowNodes[Math.floor(entry.cell / GRID)]!--;
    state.shape.columnNodes[entry.cell % GRID]!--;
    if (entry.nodes.length === 0) {
      const cell = state.shape.cells[entry.cell]!;
      cell.splice(cell.indexOf(entry), 1);
    }
    state.slotsFree--;
    if (state.slotsFree > 0) this.file(state, state.cpuFree - job.cpuMillis, state.memoryFree - job.memoryBytes);
    else {
      state.cpuFree -= job.cpuMillis;
      state.memoryFree -= job.memoryBytes;
    }
  }

  private file(state: NodeState, cpuFree: number, memoryFree: number): void {
    state.cpuFree = cpuFree;
    state.memoryFree = memoryFree;
    const { shape } = state;
    const cellIndex = gridCell(cpuFree / shape.cpuMillis) * GRID + gridCell(memoryFree / shape.memoryBytes);
    const cell = shape.cells[cellIndex]!;
    let entry = cell.find((e) => e.cpuFree === cpuFree && e.memoryFree === memoryFree);
    if (!entry) {
      entry = { cpuFree, memoryFree, cell: cellIndex, nodes: [] };
      cell.push(entry);
    }
    entry.nodes.push(state);
    state.entry = entry;
    shape.rowNodes[Math.floor(cellIndex / GRID)]!++;
    shape.columnNodes[cellIndex % GRID]!++;
  }
}

function highest(counts: Int32Array): number {
  for (let i = counts.length - 1; i >= 0; i--) if (counts[i]! > 0) return i;
  return -1;
}
