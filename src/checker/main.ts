#!/usr/bin/env node
// chaos/check: proves the scheduler's promises after a chaos run, from the history table and
// the nodes' run logs only. Exit 0: clean; 1: a promise was broken; 2: bad usage or unreadable
// inputs (nothing was proved).
import { writeFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { check, type CheckReport, type Instant } from './check.js';
import type { Run } from './run.js';
import { readCheckInput, runLogFiles } from './read.js';
import { renderTable } from '../report/table.js';

const EXIT_CLEAN = 0;
const EXIT_VIOLATION = 1;
const EXIT_USAGE = 2;

process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') return;
  throw err;
});

interface Options {
  databaseUrl: string;
  logs: string[];
  json?: string;
  cases: number;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new CommanderError(EXIT_USAGE, 'checker.badCount', `--cases: "${value}" is not a count`);
  return n;
}

const program = new Command('chaos/check')
  .description(
    'prove the promises of a chaos run (never placed twice, runs never overlap, never lost, never early, needs first) ' +
      "from the history table and the nodes' run logs",
  )
  .requiredOption(
    '--database-url <url>',
    'PostgreSQL URL of the cluster (reads the history table only)',
    process.env.DATABASE_URL,
  )
  .requiredOption('--logs <path>', 'a run log, or a directory: every *.ndjson under it (repeatable)', collect)
  .option('--json <file>', 'write the whole report as JSON to this file')
  .option('--cases <n>', 'cases to print per finding', count, 5)
  .exitOverride()
  .showHelpAfterError();

async function main(argv: string[]): Promise<number> {
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_CLEAN : EXIT_USAGE;
    throw err;
  }
  const opts = program.opts<Options>();
  let report: CheckReport;
  let files: string[];
  try {
    files = runLogFiles(opts.logs);
    report = check(await readCheckInput(opts.databaseUrl, files));
  } catch (err) {
    process.stderr.write(`error: cannot read the inputs: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_USAGE;
  }

  process.stdout.write(render(report, files, opts.cases));
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ logFiles: files, ...report }, null, 2)}\n`);
  return report.ok ? EXIT_CLEAN : EXIT_VIOLATION;
}

function render(report: CheckReport, files: string[], maxCases: number): string {
  const c = report.counts;
  const out: string[] = [];
  out.push(
    `history: ${c.historyRows} rows; run logs: ${c.runLogLines} lines in ${files.length} file(s)\n` +
      `jobs ${c.jobs}, finished ${
        Object.entries(report.finished)
          .map(([s, n]) => `${s} ${n}`)
          .join(', ') || 'none'
      }; ` +
      `assignments ${c.assignments}; runs ${c.runs} (ended by the history ${c.runsEndedByHistory}, without end ${c.runsWithoutEnd}); ` +
      `rejected ${c.rejected}; self-fenced stops ${c.selfFencedStops}` +
      (c.runLogLinesOfUnknownJobs > 0
        ? `; run-log lines of jobs not in the history ${c.runLogLinesOfUnknownJobs}`
        : '') +
      '\n\n',
  );
  out.push(
    renderTable(
      ['FINDING', 'COUNT'],
      [
        ['placed twice', String(report.placedTwice.length)],
        ['ran twice at overlapping times', String(report.overlappingRuns.length)],
        ['node ran more than it has', String(report.overcommitted.length)],
        ['lost', String(report.lost.length)],
        ['early', String(report.early.length)],
        ['placed before its needs succeeded', String(report.unmetNeeds.length)],
        ['queue ran past its limits', String(report.overQueueLimit.length)],
        ['cron occurrence handled twice', String(report.cronHandledTwice.length)],
        ['cron occurrence fired early', String(report.cronEarly.length)],
        ['cron occurrence missed (no record)', String(report.cronMissed.length)],
        ['cron occurrence stuck (cursor behind the clock)', String(report.cronStuck.length)],
        ['cron runs overlapping under Forbid or Replace', String(report.cronOverlap.length)],
      ],
    ),
  );
  const section = <T>(title: string, cases: T[], line: (c: T) => string) => {
    if (cases.length === 0) return;
    out.push(`\n${title}:\n`);
    for (const item of cases.slice(0, maxCases)) out.push(`  ${line(item)}\n`);
    if (cases.length > maxCases) out.push(`  … and ${cases.length - maxCases} more\n`);
  };
  section(
    'placed twice',
    report.placedTwice,
    (p) =>
      `${p.job} at ${p.at.iso} (history #${p.historyId}): ` +
      p.active
        .map((a) => `${a.assignment} on ${a.node ?? '?'} (epoch ${a.epoch ?? '-'}, since ${a.since.iso})`)
        .join(' and '),
  );
  section(
    'ran twice at overlapping times',
    report.overlappingRuns,
    (o) =>
      `${o.job}: ${describeRun(o.runs[0])} and ${describeRun(o.runs[1])}; overlap ${o.overlapMs === null ? 'unbounded' : `${o.overlapMs} ms`}`,
  );
  section(
    'node ran more than it has',
    report.overcommitted,
    (o) =>
      `${o.node} at ${o.at.iso}: ${o.running.length} runs, ${o.cpuMillis}m CPU / ${o.memoryBytes} B of ` +
      `${o.capacity.maxJobs ?? 'any number of'} runs, ${o.capacity.cpuMillis}m / ${o.capacity.memoryBytes} B, ` +
      `running ${o.running.map((r) => `${r.job} (${r.assignment})`).join(', ')}`,
  );
  section(
    'lost',
    report.lost,
    (l) =>
      `${l.job} (${l.jobUid}): last job state ${l.lastState ?? 'none'}${l.lastAt ? ` at ${l.lastAt.iso}` : ''}` +
      (l.assignment ? `, assignment ${l.assignment} on ${l.node ?? '?'}` : ''),
  );
  section(
    'placed before its needs succeeded',
    report.unmetNeeds,
    (u) => `${u.job}: ${u.assignment} placed at ${u.at.iso} while ${u.need} was ${u.needState ?? 'not accepted'}`,
  );
  section(
    'queue ran past its limits',
    report.overQueueLimit,
    (q) =>
      `${q.queue} at ${q.at.iso}: ${q.running} jobs, ${q.cpuMillis}m CPU, ${q.memoryBytes} B ` +
      `(limits ${q.limit.concurrencyLimit ?? '-'} jobs, ${q.limit.cpuMillis ?? '-'}m, ${q.limit.memoryBytes ?? '-'} B), ` +
      `running ${q.runs.map((r) => `${r.job} (${r.assignment} on ${r.node})`).join(', ')}`,
  );
  section(
    'cron occurrence handled twice',
    report.cronHandledTwice,
    (c) =>
      `${c.cronJob} at ${c.scheduledAt.iso}: ` +
      c.records
        .map((r) => `${r.outcome}${r.reason ? ` (${r.reason})` : ''}${r.job ? ` ${r.job}` : ''} at ${r.at.iso}`)
        .join(' and '),
  );
  section(
    'cron occurrence fired early',
    report.cronEarly,
    (c) => `${c.cronJob} at ${c.scheduledAt.iso}: ${c.job ?? 'skip'} recorded at ${c.at.iso}`,
  );
  section(
    'cron occurrence missed (no record)',
    report.cronMissed,
    (c) => `${c.cronJob} at ${c.scheduledAt.iso}: between records of ${c.after.iso} and ${c.before.iso}`,
  );
  section(
    'cron occurrence stuck (cursor behind the clock)',
    report.cronStuck,
    (c) => `${c.cronJob}: next occurrence ${c.nextFireAt.iso}, checked at ${c.checkedAt.iso}`,
  );
  section(
    'cron runs overlapping under Forbid or Replace',
    report.cronOverlap,
    (c) =>
      `${c.cronJob} (${c.policy}): ` +
      c.runs.map((r) => `${r.job} ${r.assignment} on ${r.node} [${r.start.iso} – ${r.end?.iso ?? '…'}]`).join(' and '),
  );
  section(
    'early',
    report.early,
    (e) =>
      `${e.job}: ${e.kind} ${e.assignment} on ${e.node ?? '?'}${e.pid === undefined ? '' : ` (pid ${e.pid})`} at ${e.at.iso}, ` +
      `due ${e.dueAt.iso} (${e.earlyByMs.toFixed(3)} ms early)`,
  );
  out.push(`\n${report.ok ? 'OK: no promise broken' : 'VIOLATION: a promise was broken'}\n`);
  return out.join('');
}

function describeRun(r: Run): string {
  const end = (at: Instant | null) => (at ? at.iso : '…');
  const how =
    r.end.by === 'stop'
      ? `stop ${r.end.reason ?? ''}`.trim()
      : r.end.by === 'history'
        ? `history ${r.end.state}`
        : 'no end';
  return `${r.assignment} on ${r.node} pid ${r.pid} [${r.start.iso} – ${end(r.end.at)}] (${how})`;
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = EXIT_USAGE;
  },
);
