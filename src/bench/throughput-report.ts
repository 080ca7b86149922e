// The throughput benchmark's results page (markdown) and its plot (SVG): fencer's figures, the
// peer's, and fencer ÷ peer beside each.
import { machine } from '../report/results.js';
import { xyChart, type XySeries } from './xy-plot.js';
import {
  bend,
  completionCurve,
  lastEnd,
  perSecond,
  ratio,
  startLatency,
  BACKLOG_SECONDS,
  BEND_FACTOR,
  BEND_MIN_MS,
  HELD_SHARE,
  type LatencySummary,
} from './throughput-stats.js';
import { JOB_SHAPE, WARMUP_JOBS, type BurstRun, type SteadyStep } from './throughput-modes.js';
import type { ModeRun, SystemRun, ThroughputResult, Usage } from './throughput.js';
import { GRAPHILE_VERSION } from './graphile-peer.js';

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];

const ms = (v: number | null | undefined) =>
  v === null || v === undefined ? '–' : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`;
const num = (v: number | null | undefined, digits = 0) =>
  v === null || v === undefined
    ? '–'
    : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const times = (v: number | null) => (v === null ? '–' : `${v.toFixed(2)} ×`);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const cpu = (v: number | null) => (v === null ? '–' : v.toFixed(1));

/** End to end: the first submission to the last job's end (null when some job never ended). */
export function burstFigures(run: BurstRun) {
  const end = lastEnd(run.timings);
  const wallMs = end === null || run.left > 0 ? null : end - run.firstSentMs;
  return {
    wallMs,
    jobsPerSecond: wallMs === null ? null : perSecond(run.jobs, wallMs),
    submissionsPerSecond: perSecond(run.jobs, run.lastAcceptedMs - run.firstSentMs),
    latency: startLatency(run.timings),
  };
}

function totalCpu(usage: Usage): number {
  const c = usage.cpu;
  return (c.replicas ?? 0) + (c.agents ?? 0) + (c.postgres ?? 0) + c.bench;
}

export function throughputPlot(result: ThroughputResult): string | undefined {
  const systems = [result.fencer, ...result.peers].filter((s) => s.burst);
  if (systems.length === 0) return undefined;
  const series: XySeries[] = systems.map((s, i) => {
    const run = s.burst!.run;
    const ends = run.timings.flatMap((j) => (j.endedMs === null ? [] : [j.endedMs]));
    return { label: s.label, colour: COLOURS[i % COLOURS.length]!, points: completionCurve(ends, run.firstSentMs) };
  });
  const jobs = result.options.jobs;
  return xyChart(
    `${num(jobs)} jobs submitted at once: jobs ended over time`,
    'seconds since the first submission',
    { label: 'jobs ended', min: 0, max: jobs, format: (v) => num(v) },
    series,
  );
}

export function throughputReport(result: ThroughputResult, command: string, date: Date, plotFile?: string): string {
  const o = result.options;
  const systems = [result.fencer, ...result.peers];
  const lines = [
    `# Throughput, ${date.toISOString().slice(0, 10)}`,
    '',
    `- command: \`${command}\` (or \`node dist/cli/main.js bench throughput …\`)`,
    `- machine: ${machine()}`,
    `- date: ${date.toISOString()}`,
    `- PostgreSQL: ${result.database === 'DATABASE_URL' ? 'the server DATABASE_URL names' : 'embedded (fsync off)'}, a fresh database fencer_throughput for both; ${result.postgresMeasured ? 'its CPU measured from its processes' : 'on another machine, its CPU not measured'}`,
    `- fencer: ${o.replicas} replicas, ${o.nodes} nodes of ${o.nodeCpu} CPU / ${o.nodeMemory} (process runtime, one process each), default timings; every job ${JOB_SHAPE.cpu} CPU, ${JOB_SHAPE.memory}, ${JOB_SHAPE.durationMs} ms, so room is never what it waits for`,
    `- graphile-worker ${GRAPHILE_VERSION}${result.peers.length ? '' : ' (not run)'}: one worker pool in the benchmark's process, concurrency ${o.peerConcurrency}, a handler that waits ${JOB_SHAPE.durationMs} ms; **batched** = its documented batching (local queue of 500, completions batched with delay 0), **unbatched** = its defaults; jobs enqueued with addJobs, a batch per call; run after fencer's cluster was stopped`,
    '',
    `- each system took ${WARMUP_JOBS} jobs one at a time before its first load, not counted`,
    "- **fencer ÷ peer** above 1 means fencer's figure is the larger: faster for jobs/s and submissions/s, slower for latencies, costlier for CPU",
    '',
    '## How each figure is measured',
    '',
    "- **wall time**: from the first submission sent (the client's clock) to the last job's end: fencer's `finished_at` (its finish report applied), graphile-worker's handler return (its completion is written a moment later); **jobs/s** is the jobs over that time.",
    '- **submissions/s**: jobs accepted over the time from the first submission sent to the last one accepted (201/200).',
    "- **submit → start**: a job's `created_at` (its insert transaction's `now()`, in both) to its start: for fencer its first `Running` row in the history (the node's start report applied, so after the node started it), for graphile-worker its handler's first line. All clocks are this machine's.",
    "- **CPU seconds**: utime + stime from /proc/PID/stat of each process before and after the load: the replicas, the agents, PostgreSQL (the postmaster with its reaped children, and its live children), and the benchmark's own process (the client; for graphile-worker also its workers).",
    "- **leader changes**: the lease's epoch after minus before; **leader RSS**: VmRSS of the replica leading at the start, the most of samples every 250 ms during the load, and its VmHWM (peak since it started) at the end.",
    "- **worst event-loop delay**: `nodejs_eventloop_lag_max_seconds` of each replica's and agent's /metrics, scraped before the load (which resets it) and after.",
    "- **assignments, attempts, phases**: fencer's `assignments` and `jobs` rows of the load's jobs after it.",
    '',
  ];
  if (o.modes.includes('burst')) lines.push(...burstSection(systems, o, plotFile));
  if (o.modes.includes('steady')) lines.push(...steadySection(systems, o.stepSeconds));
  if (o.modes.includes('single')) lines.push(...singleSection(systems, o.singles, o.singleGapMs));
  const v = result.verdict;
  lines.push(
    '## Checker',
    '',
    `Over fencer's history and its nodes' run logs: placed twice / run twice at once / node over capacity / lost / early: ${v.placedTwice} / ${v.overlappingRuns} / ${v.overcommitted} / ${v.lost} / ${v.early} (${v.runs} runs): ${v.ok ? '**clean**' : '**VIOLATION**'}`,
    '',
  );
  return lines.join('\n');
}

/** A markdown table row of these cells. */
const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;

/** A table row: fencer's value, each peer's, then fencer ÷ each peer. */
function row(
  label: string,
  systems: SystemRun[],
  value: (s: SystemRun) => number | null,
  format: (v: number | null) => string,
  withRatio = true,
): string {
  const values = systems.map(value);
  return line([
    label,
    ...values.map(format),
    ...values.slice(1).map((v) => (withRatio ? times(ratio(values[0], v)) : '')),
  ]);
}

function header(systems: SystemRun[]): string[] {
  const cells = ['', ...systems.map((s) => s.label), ...systems.slice(1).map((s) => `fencer ÷ ${s.label}`)];
  return [line(cells), line(cells.map(() => '---'))];
}

function burstSection(systems: SystemRun[], o: ThroughputResult['options'], plotFile?: string): string[] {
  const ran = systems.filter((s) => s.burst);
  const figures = (s: SystemRun) => burstFigures(s.burst!.run);
  const usage = (s: SystemRun) => s.burst!.usage;
  const lines = [
    `## Burst: ${num(o.jobs)} jobs in batches of ${num(o.batch)}, ${o.inFlight} requests in flight`,
    '',
    ...header(ran),
    row(
      'wall time, first submission → last job ended',
      ran,
      (s) => figures(s).wallMs,
      (v) => (v === null ? 'did not finish' : `${(v / 1000).toFixed(2)} s`),
    ),
    row(
      '**jobs/s** end to end',
      ran,
      (s) => figures(s).jobsPerSecond,
      (v) => num(v),
    ),
    row(
      'submissions/s',
      ran,
      (s) => figures(s).submissionsPerSecond,
      (v) => num(v),
    ),
    row('submit → start p50', ran, (s) => figures(s).latency.p50Ms, ms),
    row('submit → start p99', ran, (s) => figures(s).latency.p99Ms, ms),
    row('submit → start max', ran, (s) => figures(s).latency.maxMs, ms),
    row('CPU seconds, all processes', ran, (s) => totalCpu(usage(s)), cpu),
    row(
      'CPU seconds per 1,000 jobs',
      ran,
      (s) => (totalCpu(usage(s)) * 1000) / o.jobs,
      (v) => (v === null ? '–' : v.toFixed(2)),
    ),
    line([
      'CPU seconds: replicas / agents / PostgreSQL / benchmark process',
      ...ran.map((s) => cpuSplit(usage(s))),
      ...ran.slice(1).map(() => ''),
    ]),
    row(
      'jobs not ended when the wait gave up',
      ran,
      (s) => s.burst!.run.left,
      (v) => num(v),
      false,
    ),
    '',
  ];
  const f = systems[0]!.burst;
  if (f?.fencer) lines.push(...fencerFacts(f, 'batches'));
  if (plotFile) lines.push(`![jobs ended over time](${plotFile})`, '');
  return lines;
}

function cpuSplit(u: Usage): string {
  return `${cpu(u.cpu.replicas)} / ${cpu(u.cpu.agents)} / ${cpu(u.cpu.postgres)} / ${cpu(u.cpu.bench)}`;
}

function fencerFacts(m: ModeRun<unknown>, sent: string): string[] {
  const f = m.fencer!;
  const out = f.outcome;
  const resends = (m.run as { resends?: number }).resends;
  return [
    'fencer alone:',
    '',
    '| | |',
    '|---|---|',
    `| jobs by final phase | ${
      Object.entries(out.phases)
        .map(([phase, n]) => `${phase} ${num(n)}`)
        .join(', ') || 'none'
    } |`,
    `| assignments per job | ${out.jobs ? (out.assignments / out.jobs).toFixed(3) : '–'} (${num(out.assignments)} assignments) |`,
    `| assignments ended Unconfirmed / Lost | ${out.unconfirmed} / ${out.lost} |`,
    `| attempts used beyond the first | ${out.extraAttempts} |`,
    `| leader changes | ${f.epochAfter - f.epochBefore} (epoch ${f.epochBefore} → ${f.epochAfter}; ${f.leaderBefore ?? 'none'} → ${f.leaderAfter ?? 'none'}) |`,
    `| leader's RSS, most sampled / peak (VmHWM) | ${f.leaderMemory ? `${mib(f.leaderMemory.sampledMaxBytes)} / ${mib(f.leaderMemory.peakBytes)}` : '–'} |`,
    `| leader's V8 heap after the load: allocated / used; outside the heap (external) | ${f.leaderHeap ? `${mib(f.leaderHeap.totalBytes)} / ${mib(f.leaderHeap.usedBytes)}; ${mib(f.leaderHeap.externalBytes)}` : '–'} |`,
    `| worst event-loop delay, replicas / agents | ${ms(f.replicaLagMaxMs)} / ${ms(f.agentLagMaxMs)} |`,
    `| nodes that fenced themselves / declared dead | ${f.selfFences} / ${f.nodesDied} |`,
    ...(resends === undefined
      ? []
      : [`| ${sent} sent again (429 Retry-After, or no replica took them) | ${resends} |`]),
    `| CPU seconds: replicas / agents / PostgreSQL / benchmark process | ${cpuSplit(m.usage)} |`,
    '',
  ];
}

function steadySection(systems: SystemRun[], stepSeconds: number): string[] {
  const ran = systems.filter((s) => s.steady);
  const lines = [
    `## Steady: each rate held ${stepSeconds} s, stepped up`,
    '',
    `Jobs due are sent every 100 ms as one request. A step **kept up** when its jobs were accepted at ${HELD_SHARE * 100} % of the rate or more and, when its submissions ended, no more than ${BACKLOG_SECONDS} s of arrivals had not started; stepping stops after the first that did not. The curve **bends** at the first step that did not keep up or whose p99 is more than ${BEND_FACTOR} × the lowest p99 of the rates below it and ${BEND_MIN_MS} ms more.`,
    '',
  ];
  const cells = [
    'rate/s',
    ...ran.map((s) => `${s.label}: accepted/s, not started at the end, submit → start p50 / p99, kept up`),
    ...ran.slice(1).map((s) => `p99 fencer ÷ ${s.label}`),
  ];
  lines.push(line(cells), line(cells.map(() => '---')));
  const rates = [...new Set(ran.flatMap((s) => s.steady!.run.map((step) => step.rate)))].sort((a, b) => a - b);
  const stepOf = (s: SystemRun, rate: number): SteadyStep | undefined => s.steady!.run.find((x) => x.rate === rate);
  for (const rate of rates) {
    const figures = ran.map((s) => {
      const step = stepOf(s, rate);
      if (!step) return 'not run';
      return `${num(step.accepted / step.submitSeconds)}, ${step.notStartedAtEnd}, ${ms(step.latency.p50Ms)} / ${ms(step.latency.p99Ms)}, ${step.keptUp ? 'yes' : '**no**'}`;
    });
    const ratios = ran
      .slice(1)
      .map((s) => times(ratio(stepOf(ran[0]!, rate)?.latency.p99Ms, stepOf(s, rate)?.latency.p99Ms)));
    lines.push(line([num(rate), ...figures, ...ratios]));
  }
  lines.push('');
  for (const s of ran) {
    const b = bend(s.steady!.run);
    lines.push(`- ${s.label}: ${b ? `bends at **${num(b.rate)}/s**: ${b.why}` : 'no bend within the rates run'}`);
  }
  lines.push('');
  const f = systems[0]!.steady;
  if (f?.fencer) lines.push(...fencerFacts(f, 'requests'));
  return lines;
}

function singleSection(systems: SystemRun[], count: number, gapMs: number): string[] {
  const ran = systems.filter((s) => s.single);
  const latency = (s: SystemRun): LatencySummary => startLatency(s.single!.run.timings);
  const lines = [
    `## Single: ${count} jobs one at a time, each ${gapMs} ms after the last was accepted, on an idle system`,
    '',
    "Running as the database recorded it (see above): a job's `created_at` to its first `Running` history row for fencer, to its handler's start for graphile-worker.",
    '',
    ...header(ran),
    row('submit → start p50', ran, (s) => latency(s).p50Ms, ms),
    row('submit → start p99', ran, (s) => latency(s).p99Ms, ms),
    row('submit → start max', ran, (s) => latency(s).maxMs, ms),
    row('request sent → accepted p50 (the client)', ran, (s) => s.single!.run.answers.p50Ms, ms),
    row('request sent → accepted p99 (the client)', ran, (s) => s.single!.run.answers.p99Ms, ms),
    row('CPU seconds, all processes', ran, (s) => totalCpu(s.single!.usage), cpu),
    '',
  ];
  const f = systems[0]!.single;
  if (f?.fencer) lines.push(...fencerFacts(f, 'jobs'));
  return lines;
}
