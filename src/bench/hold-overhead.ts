// What a real cluster has that the simulation has not: how long each placement held its node's
// resources beyond its job's run (placement's commit to the finish report), split at the start
// report. The packing and fairness benchmarks report it.
import type { Db } from '../store/db.js';
import { sql } from '../store/sql.js';

export interface HoldOverhead {
  assignments: number;
  /** Placement committed → start report applied. */
  toStartP50Ms: number;
  toStartP99Ms: number;
  /** Held minus the job's duration, per assignment. */
  beyondRunP50Ms: number;
  beyondRunP99Ms: number;
  /** Share of all allocated node-time that was beyond the runs. */
  shareOfHeld: number;
}

export async function holdOverhead(db: Db): Promise<HoldOverhead> {
  return (await db.query<HoldOverhead>(sql('bench/hold_overhead'))).rows[0]!;
}
