// The fairness benchmark's results page (markdown) and its plots (SVG): each tenant's wait over
// the flood with fair share on and off, and the weighted queues' ratio per window.
import { machine } from '../report/results.js';
import { xyChart, type XySeries } from './xy-plot.js';
import {
  JOB_CPU_MILLIS,
  JOB_MEMORY_BYTES,
  TENANTS,
  TRICKLE_STOP_SECONDS,
  WEIGHTS,
  type FairnessResult,
  type FloodRun,
  type RunFacts,
  type WeightsRun,
} from './fairness.js';
import type { WaitStats } from './fairness-measure.js';
import type { Verdict } from '../checker/check.js';
import type { LatencySummary } from './placement-metrics.js';

/** The issue's targets. */
export const TARGETS = {
  trickleP99Ms: 1000,
  offOverOn: 100,
  cpuUse: 0.95,
  floodOverBound: 1.1,
  weightTolerance: 0.05,
} as const;

const pct = (share: number | null) => (share === null ? 'n/a' : `${(share * 100).toFixed(1)} %`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ms = (v: number | null) =>
  v === null ? 'n/a' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`;
const waits = (w: WaitStats | undefined) => (w ? `${ms(w.p50Ms)} / ${ms(w.p99Ms)} / ${ms(w.maxMs)}` : 'n/a');
const met = (ok: boolean | null) => (ok === null ? '' : ok ? ' — met' : ' — **missed**');
const heavy = WEIGHTS.queues[0];
const light = WEIGHTS.queues[1];
const expectedRatio = heavy.weight / light.weight;

export function fairnessPlots(result: FairnessResult): { waits?: string; shares?: string } {
  const plots: { waits?: string; shares?: string } = {};
  if (result.on && result.off) {
    const colours: Record<string, string> = {
      [TENANTS.flood]: '#888',
      [TENANTS.trickle[0]]: '#1f77b4',
      [TENANTS.trickle[1]]: '#d62728',
    };
    const series = (run: FloodRun, mode: string, dashed: boolean): XySeries[] =>
      Object.entries(run.waitPoints).map(([tenant, points]) => ({
        label: `${tenant}, fair share ${mode}`,
        colour: colours[tenant] ?? '#2ca02c',
        dashed,
        // The flood's thousands of points say no more than a few hundred of them.
        points:
          tenant === TENANTS.flood
            ? points.filter((_, i) => i % Math.max(1, Math.floor(points.length / 400)) === 0)
            : points,
      }));
    plots.waits = xyChart(
      `Wait (submit → running) by submit time, flood of ${result.options.flood}, fair share on (solid) and off (dashed)`,
      "seconds since the flood's first job was created",
      { label: 'wait, seconds (log)', min: 0.01, max: 1000, log: true },
      [...series(result.on, 'on', false), ...series(result.off, 'off', true)],
      [{ from: 0.01, to: TARGETS.trickleP99Ms / 1000, colour: '#2ca02c', label: 'B and C p99 target' }],
    );
  }
  if (result.weights && result.weights.shares.windows.length > 0) {
    const lo = expectedRatio * (1 - TARGETS.weightTolerance);
    const hi = expectedRatio * (1 + TARGETS.weightTolerance);
    plots.shares = xyChart(
      `${heavy.name} : ${light.name} over each ${result.options.windowSeconds} s window (fair share on)`,
      'window start, seconds into the saturated interval',
      {
        label: 'CPU-seconds ratio',
        min: expectedRatio - 1,
        max: expectedRatio + 1,
        ticks: [2, 2.5, lo, expectedRatio, hi, 3.5, 4].filter((t) => t >= expectedRatio - 1 && t <= expectedRatio + 1),
        format: (v) => v.toFixed(2),
      },
      [
        {
          label: 'ratio',
          colour: '#1f77b4',
          points: result.weights.shares.windows.map((w) => [w.atMs / 1000, w.ratio]),
        },
      ],
      [{ from: lo, to: hi, colour: '#2ca02c', label: `${expectedRatio}:1 ± ${TARGETS.weightTolerance * 100} %` }],
    );
  }
  return plots;
}

export function fairnessReport(
  result: FairnessResult,
  command: string,
  date: Date,
  plotFiles: { waits?: string; shares?: string },
): string {
  const o = result.options;
  const slots = (o.nodes * o.nodeCpu * 1000) / JOB_CPU_MILLIS;
  const endEveryMs = o.durationMs / slots;
  const anyRun = result.on ?? result.off ?? result.weights;
  const lines = [
    `# Fair share benchmark, ${date.toISOString().slice(0, 10)}`,
    '',
    `- command: \`${command}\` (or \`node dist/cli/main.js bench fairness …\`)`,
    `- machine: ${machine()}`,
    `- date: ${date.toISOString()}`,
    `- cluster: ${o.replicas} replicas, ${o.nodes} nodes of ${o.nodeCpu} CPU / ${o.nodeCpu * 4} GiB, ${anyRun?.runtime ?? o.runtime} runtime${o.nodesPerProcess > 1 ? ` (${o.nodesPerProcess} nodes per agent)` : ''}${anyRun?.runtimeNote ? ` (${anyRun.runtimeNote})` : ''}, ${o.databaseUrl || process.env.DATABASE_URL ? 'a fresh database per run on the PostgreSQL given' : 'a fresh embedded PostgreSQL per run'}, default timings (placement pass 100 ms, woken by NOTIFY on submit and on every job end, at most one round per 30 ms); each run on a fresh cluster, replicas started with FENCER_FAIR_SHARE=on or off`,
    `- every job: ${JOB_CPU_MILLIS / 1000} CPU / ${JOB_MEMORY_BYTES / 2 ** 30} GiB; ${durations(o)}. The cluster runs ${slots} at once and, full, one ends every ${endEveryMs.toFixed(0)} ms on average: a fair scheduler can give a newly submitted job the next room that frees, well within the 1 s target`,
    "- wait: the job's first `Running` row in the history (its node's start report applied) minus `jobs.created_at` (the submit's transaction), both by the database's clock",
    '- CPU use: allocated over capacity summed over the nodes (placement to finish report), sampled every 500 ms from the database, over the samples in which some job was pending',
    '',
  ];
  if (result.on || result.off) lines.push(...floodSection(result));
  if (result.weights) lines.push(...weightsSection(result, result.weights));
  if (plotFiles.waits) lines.push(`![wait by submit time, fair share on and off](${plotFiles.waits})`, '');
  if (plotFiles.shares) lines.push(`![ratio of the weighted queues per window](${plotFiles.shares})`, '');
  return lines.join('\n');
}

function durations(o: FairnessResult['options']): string {
  const mean = `${o.durationMs} ms`;
  if (o.spread === 0) return `each runs ${mean}`;
  const lo = Math.round(o.durationMs * (1 - o.spread));
  const hi = Math.round(o.durationMs * (1 + o.spread));
  return (
    `the flood's jobs run a duration drawn uniformly from ${lo}–${hi} ms (mean ${mean}, seed ${o.seed}), every other job ${mean}. ` +
    '(Flood jobs of one length, started together on an empty cluster, end together run after run: room frees in bursts a run apart for the first half minute or so, and a trickle job waits for the next burst whatever the scheduler does. ' +
    'Trickle jobs of one length stay in arrival order within their tenant: the default most-work-first order would let a longer job of the same tenant pass a shorter one)'
  );
}

function floodSection(result: FairnessResult): string[] {
  const o = result.options;
  const { on, off } = result;
  const runs: Array<[string, FloodRun | undefined]> = [
    ['fair share on', on],
    ['fair share off (arrival order)', off],
  ];
  const cell = (f: (r: FloodRun) => string) => runs.map(([, r]) => (r ? f(r) : 'n/a')).join(' | ');
  const [b, c] = TENANTS.trickle;
  const ratio = (tenant: string) => {
    const a = on?.waits[tenant]?.p99Ms;
    const z = off?.waits[tenant]?.p99Ms;
    return a && z ? z / a : null;
  };
  const p99Met = (tenant: string) =>
    on?.waits[tenant]?.p99Ms == null ? null : on.waits[tenant]!.p99Ms! <= TARGETS.trickleP99Ms;
  const rB = ratio(b);
  const rC = ratio(c);
  const bound = (r: FloodRun) => r.finish.finishMs / r.finish.lowerBoundWithOthersMs;
  return [
    '## A flood against a trickle',
    '',
    `Tenants are namespaces, each job in its namespace's \`default\` queue (weight 1). ${TENANTS.flood} submits ${o.flood} jobs at once (requests of 500 jobs back to back, spread over the replicas); once they are in, ${b} and ${c} each submit one job every ${o.trickleMs} ms (half a period apart), until the flood has fewer than ${TRICKLE_STOP_SECONDS} s of the full cluster's work left to place.`,
    `The flood's finish runs from its first job's creation to its last job's finish. Its lower bound is its work over the cluster's CPU; the trickle runs beside it, so the bound the target is judged against also counts the CPU-seconds of the trickle's runs (their nominal durations) inside the flood's window.`,
    '',
    `| | ${runs.map(([label]) => label).join(' | ')} | target |`,
    '|---|---|---|---|',
    `| ${b} wait p50 / p99 / max | ${cell((r) => waits(r.waits[b]))} | p99 ≤ 1 s with fair share${met(p99Met(b))} |`,
    `| ${c} wait p50 / p99 / max | ${cell((r) => waits(r.waits[c]))} | p99 ≤ 1 s with fair share${met(p99Met(c))} |`,
    `| ${TENANTS.flood} (the flood) wait p50 / p99 / max | ${cell((r) => waits(r.waits[TENANTS.flood]))} | |`,
    `| p99 wait off ÷ on, ${b} / ${c} | ${rB === null ? 'n/a' : `${rB.toFixed(0)} ×`} / ${rC === null ? 'n/a' : `${rC.toFixed(0)} ×`} | | ≥ 100 ×${met(rB === null || rC === null ? null : rB >= TARGETS.offOverOn && rC >= TARGETS.offOverOn)} |`,
    `| CPU use while jobs waited, mean / p5 (samples) | ${cell((r) => `${pct(r.use.mean)} / ${pct(r.use.p5)} (${r.use.samples})`)} | mean ≥ 95 %${met(on?.use.mean == null ? null : on.use.mean >= TARGETS.cpuUse)} |`,
    `| the flood's finish | ${cell((r) => seconds(r.finish.finishMs))} | |`,
    `| its lower bound: flood alone / with the trickle's runs in its window | ${cell((r) => `${seconds(r.finish.lowerBoundMs)} / ${seconds(r.finish.lowerBoundWithOthersMs)}`)} | |`,
    `| finish ÷ lower bound with the trickle (÷ the flood alone) | ${cell((r) => `${bound(r).toFixed(3)} (${(r.finish.finishMs / r.finish.lowerBoundMs).toFixed(3)})`)} | ≤ 1.1 with fair share${met(on ? bound(on) <= TARGETS.floodOverBound : null)} |`,
    `| trickle jobs submitted (refused) | ${cell((r) => `${r.trickleSubmitted} (${r.trickleRefused})`)} | |`,
    `| jobs by final phase | ${cell((r) => JSON.stringify(r.phases))} | |`,
    `| checker: ${VERDICT_COLUMNS} | ${cell((r) => verdictLine(r.verdict))} | all 0 |`,
    `| run's wall time (cluster start to last job) | ${cell((r) => seconds(r.wallMs))} | |`,
    '',
    'Where the time goes (what the targets above depend on):',
    '',
    `| | ${runs.map(([label]) => label).join(' | ')} |`,
    '|---|---|---|',
    `| ${b} wait in two, p50 / p99: submit → placed (the scheduler); placed → running (the node's claim) | ${cell((r) => split(r.waits[b]))} |`,
    `| ${c} wait in two, the same | ${cell((r) => split(r.waits[c]))} |`,
    `| ${b} / ${c}, by the submitting client's clock: request sent → running p99; 201 received → placed p50 / p99 | ${cell((r) => `${client(r.waits[b])}; ${client(r.waits[c])}`)} |`,
    ...diagnosticRows(runs),
    '',
  ];
}

function split(w: WaitStats | undefined): string {
  return w
    ? `${ms(w.toPlacedP50Ms)} / ${ms(w.toPlacedP99Ms)}; ${ms(w.placedToRunningP50Ms)} / ${ms(w.placedToRunningP99Ms)}`
    : 'n/a';
}

function client(w: WaitStats | undefined): string {
  return w ? `${ms(w.sentToRunningP99Ms)}; ${ms(w.answeredToPlacedP50Ms)} / ${ms(w.answeredToPlacedP99Ms)}` : 'n/a';
}

/** Placement rounds and how long placements hold CPU beyond their runs, one column per run. */
function diagnosticRows(runs: ReadonlyArray<[string, RunFacts | undefined]>): string[] {
  const cell = (f: (r: RunFacts) => string) => runs.map(([, r]) => (r ? f(r) : 'n/a')).join(' | ');
  const round = (t: LatencySummary) => `${t.count}: ${ms2(t.p50Ms)} / ${ms2(t.p99Ms)}`;
  return [
    `| placement rounds that had pending jobs: count: p50 / p99 of the whole round (read, decide, fenced commit; from the /metrics histograms, estimated within a bucket) | ${cell((r) => round(r.rounds.round))} |`,
    `| of which the decision alone, p50 / p99 | ${cell((r) => `${ms2(r.rounds.decide.p50Ms)} / ${ms2(r.rounds.decide.p99Ms)}`)} |`,
    `| placement committed → start report applied, p50 / p99 | ${cell((r) => `${ms(r.hold.toStartP50Ms)} / ${ms(r.hold.toStartP99Ms)}`)} |`,
    `| CPU held beyond the job's run (placement to finish report), p50 / p99; share of all held CPU time | ${cell((r) => `${ms(r.hold.beyondRunP50Ms)} / ${ms(r.hold.beyondRunP99Ms)}; ${pct(r.hold.shareOfHeld)}`)} |`,
  ];
}

const ms2 = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(1)} ms`);

function weightsSection(result: FairnessResult, run: WeightsRun): string[] {
  const o = result.options;
  const s = run.shares;
  const lo = expectedRatio * (1 - TARGETS.weightTolerance);
  const hi = expectedRatio * (1 + TARGETS.weightTolerance);
  const within = s.windows.length > 0 && s.minRatio! >= lo && s.maxRatio! <= hi;
  const inside = s.windows.filter((w) => w.ratio >= lo && w.ratio <= hi).length;
  return [
    '## Weights 3:1 under saturation',
    '',
    `Namespace \`${WEIGHTS.namespace}\`, queues \`${heavy.name}\` (weight ${heavy.weight}) and \`${light.name}\` (weight ${light.weight}), made with applyQueue before the jobs; ${Object.entries(
      run.jobs,
    )
      .map(([q, n]) => `${n} jobs in ${q}`)
      .join(
        ' and ',
      )}, submitted together, interleaved 3:1 (so neither is ahead in arrival order). Saturated: from the later first submit to the earlier last start, while both queues had jobs waiting. In each ${o.windowSeconds} s window (1 s apart) inside it, the CPU-seconds each queue's runs accrued (nominal durations from each job's first start); the target is every window within ${TARGETS.weightTolerance * 100} % of ${expectedRatio}:1 (a ratio in [${lo.toFixed(2)}, ${hi.toFixed(2)}]).`,
    '',
    '| | | target |',
    '|---|---|---|',
    `| saturated for | ${seconds(s.saturatedToMs - s.saturatedFromMs)} | ≥ 90 s |`,
    `| ${o.windowSeconds} s windows | ${s.windows.length} (${inside} within ${TARGETS.weightTolerance * 100} %) | |`,
    `| ratio ${heavy.name} : ${light.name}, min / max over the windows | ${s.minRatio === null ? 'n/a' : `${s.minRatio.toFixed(3)} / ${s.maxRatio!.toFixed(3)}`} | within [${lo.toFixed(2)}, ${hi.toFixed(2)}]${met(s.windows.length ? within : null)} |`,
    `| ratio over the whole saturated interval | ${s.overallRatio === null ? 'n/a' : s.overallRatio.toFixed(3)} | ${expectedRatio} |`,
    `| CPU use while jobs waited, mean / p5 | ${pct(run.use.mean)} / ${pct(run.use.p5)} | |`,
    `| jobs by final phase | ${JSON.stringify(run.phases)} | |`,
    `| checker: ${VERDICT_COLUMNS} | ${verdictLine(run.verdict)} | all 0 |`,
    `| run's wall time | ${seconds(run.wallMs)} | |`,
    '',
    '| | |',
    '|---|---|',
    ...diagnosticRows([['', run]]),
    '',
  ];
}

const VERDICT_COLUMNS = 'placed twice / run twice at once / node over capacity / lost / early / over a queue limit';

function verdictLine(v: Verdict): string {
  const counts = `${v.placedTwice} / ${v.overlappingRuns} / ${v.overcommitted} / ${v.lost} / ${v.early} / ${v.overQueueLimit} (${v.runs} runs)`;
  return v.ok ? `${counts}: clean` : `${counts}: **VIOLATION**`;
}

/** Every run's checker was clean. */
export function allClean(result: FairnessResult): boolean {
  return [result.on, result.off, result.weights].every((r: RunFacts | undefined) => r === undefined || r.verdict.ok);
}
