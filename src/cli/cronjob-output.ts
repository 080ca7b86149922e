// What `get cronjobs` and `describe cronjob` print: pure functions of the objects and a clock,
// like ./output.ts. The columns are kubectl's for a CronJob plus NEXT, the stored cursor.
import type { CronJob } from '../domain/resources.js';
import { renderTable } from '../report/table.js';
import {
  describeConditions,
  describeFields,
  formatLabels,
  humanAge,
  render,
  withAge,
  type RenderOptions,
} from './output.js';
import { humanDuration } from '../domain/duration.js';

const NONE = '<none>';

/** One occurrence as GET …/cronjobs/NAME/occurrences gives it. */
export interface Occurrence {
  scheduledTime: string;
  outcome: 'Fired' | 'Skipped';
  reason?: string;
  job?: string;
  handledTime: string;
  startTime?: string;
}

export function renderCronJobs(cronJobs: CronJob[], options: RenderOptions): string {
  return render(cronJobs, 'CronJob', options, () => cronJobsTable(cronJobs, options));
}

function cronJobsTable(cronJobs: CronJob[], { format, now, allNamespaces }: RenderOptions): string {
  const header = ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'NEXT', 'AGE'];
  if (format === 'wide') header.push('CONCURRENCY', 'CATCH-UP');
  if (allNamespaces) header.unshift('NAMESPACE');
  const rows = cronJobs.map((c) => {
    const row = [
      c.metadata.name,
      c.spec.schedule,
      c.spec.timeZone ?? 'UTC',
      String(c.spec.suspend ?? false),
      String(c.status?.activeCount ?? 0),
      c.status?.lastScheduleTime ? `${humanAge(c.status.lastScheduleTime, now)} ago` : NONE,
      c.status?.nextScheduleTime ? untilOrAgo(c.status.nextScheduleTime, now) : NONE,
      humanAge(c.metadata.creationTimestamp, now),
    ];
    if (format === 'wide') row.push(c.spec.concurrencyPolicy ?? 'Allow', c.spec.catchUp ?? 'latest');
    if (allNamespaces) row.unshift(c.metadata.namespace ?? 'default');
    return row;
  });
  return renderTable(header, rows);
}

/** "in 12s" for a time ahead, "due 3s" for one already due (the next pass fires it). */
function untilOrAgo(timestamp: string, now: Date): string {
  const at = Date.parse(timestamp);
  return at > now.getTime() ? `in ${humanDuration(at - now.getTime())}` : `due ${humanDuration(now.getTime() - at)}`;
}

/** `fencer describe cronjob`: its spec, status and recent occurrences, each with how late it fired and started. */
export function describeCronJob(cronJob: CronJob, occurrences: Occurrence[], now: Date): string {
  const { spec, status } = cronJob;
  const fields: Array<[string, string]> = [
    ['Name', cronJob.metadata.name],
    ['Namespace', cronJob.metadata.namespace ?? 'default'],
    ['Labels', formatLabels(cronJob.metadata.labels, '\n')],
    ['Created', withAge(cronJob.metadata.creationTimestamp, now)],
    ['Schedule', spec.schedule],
    ['Time Zone', spec.timeZone ?? 'UTC'],
    ['Suspend', String(spec.suspend ?? false)],
    ['Concurrency Policy', spec.concurrencyPolicy ?? 'Allow'],
    ['Catch Up', spec.catchUp ?? 'latest'],
    ['Starting Deadline', spec.startingDeadlineSeconds === undefined ? NONE : `${spec.startingDeadlineSeconds}s`],
    ['History Limits', `${spec.successfulJobsHistoryLimit ?? 3} succeeded, ${spec.failedJobsHistoryLimit ?? 1} failed`],
    ['Last Schedule Time', status?.lastScheduleTime ? withAge(status.lastScheduleTime, now) : NONE],
    ['Last Successful Time', status?.lastSuccessfulTime ? withAge(status.lastSuccessfulTime, now) : NONE],
    ['Next Schedule Time', status?.nextScheduleTime ?? NONE],
    ['Active Jobs', status?.active.length ? status.active.map((j) => j.name).join(', ') : NONE],
  ];
  const header = ['Scheduled', 'Outcome', 'Job / Reason', 'Fired Late', 'Started Late'];
  const rule = header.map((h) => '-'.repeat(h.length));
  const rows = occurrences.map((o) => [
    o.scheduledTime,
    o.outcome,
    o.job ?? o.reason ?? NONE,
    o.outcome === 'Fired' ? lateness(o.scheduledTime, o.handledTime) : '-',
    o.startTime ? lateness(o.scheduledTime, o.startTime) : '-',
  ]);
  const table = occurrences.length === 0 ? `  ${NONE}` : indent(renderTable(header, [rule, ...rows]).trimEnd());
  return `${describeFields(fields)}\nRecent Occurrences (newest first):\n${table}\n${describeConditions(status?.conditions ?? [])}`;
}

/** Seconds from the scheduled time, to the millisecond: lateness is what this table is for. */
function lateness(scheduled: string, at: string): string {
  return `${((Date.parse(at) - Date.parse(scheduled)) / 1000).toFixed(3)}s`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
