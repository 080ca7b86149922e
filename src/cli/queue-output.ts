// What `get queues`, `get resourcequotas` and `describe queue|resourcequota|namespace` print: pure
// functions of the objects and a clock, like ./output.ts. Use is always shown against its limit,
// so what holds a job back reads at a glance.
import type { Condition, Queue, ResourceQuota } from '../domain/resources.js';
import type { NamespaceResource } from '../domain/namespace.js';
import { parseCpu, parseMemory } from '../domain/quantity.js';
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

const NONE = '<none>';

/** What a used/limit pair counts, to work out the share: jobs, CPU or memory. */
type Measure = 'jobs' | 'cpu' | 'memory';

export function renderQueues(queues: Queue[], options: RenderOptions): string {
  return render(queues, 'Queue', options, () => queuesTable(queues, options));
}

export function renderResourceQuotas(quotas: ResourceQuota[], options: RenderOptions): string {
  return render(quotas, 'ResourceQuota', options, () => quotasTable(quotas, options));
}

// The CRD's printer columns first (what kubectl would show), then use against the limits.
function queuesTable(queues: Queue[], { format, now, allNamespaces }: RenderOptions): string {
  const wide = format === 'wide';
  const header = ['NAME', 'WEIGHT', 'LIMIT', 'RUNNING', 'PENDING', 'AGE'];
  if (wide) header.push('CPU', 'MEMORY', 'LANES', 'OLDEST-PENDING', 'AT-LIMIT');
  if (allNamespaces) header.unshift('NAMESPACE');
  const rows = queues.map((q) => {
    const status = q.status;
    const row = [
      q.metadata.name,
      String(q.spec.weight ?? 1),
      q.spec.concurrencyLimit === undefined ? NONE : String(q.spec.concurrencyLimit),
      String(status?.running ?? 0),
      String(status?.pending ?? 0),
      humanAge(q.metadata.creationTimestamp, now),
    ];
    if (wide) {
      row.push(
        fraction(status?.allocated.cpu ?? '0', q.spec.resourceLimit?.cpu),
        fraction(status?.allocated.memory ?? '0', q.spec.resourceLimit?.memory),
        q.spec.lanes ?? 'weighted',
        status?.oldestPendingTime ? humanAge(status.oldestPendingTime, now) : NONE,
        atLimit(status?.conditions),
      );
    }
    if (allNamespaces) row.unshift(q.metadata.namespace ?? 'default');
    return row;
  });
  return renderTable(header, rows);
}

function quotasTable(quotas: ResourceQuota[], { now, allNamespaces }: RenderOptions): string {
  const header = ['NAME', 'PENDING', 'CPU', 'MEMORY', 'RATE', 'AGE'];
  if (allNamespaces) header.unshift('NAMESPACE');
  const rows = quotas.map((q) => {
    const used = q.status?.used;
    const hard = q.spec.hard ?? {};
    const row = [
      q.metadata.name,
      fraction(String(used?.pendingJobs ?? 0), hard.pendingJobs),
      fraction(used?.cpu ?? '0', hard.cpu),
      fraction(used?.memory ?? '0', hard.memory),
      rate(q.spec.placementRate),
      humanAge(q.metadata.creationTimestamp, now),
    ];
    if (allNamespaces) row.unshift(q.metadata.namespace ?? 'default');
    return row;
  });
  return renderTable(header, rows);
}

/** `fencer describe queue`: its spec, what it holds against its limits, what waits and since when. */
export function describeQueue(queue: Queue, now: Date): string {
  const { spec, status } = queue;
  const fields: Array<[string, string]> = [
    ['Name', queue.metadata.name],
    ['Namespace', queue.metadata.namespace ?? 'default'],
    ['Labels', formatLabels(queue.metadata.labels, '\n')],
    ['Created', withAge(queue.metadata.creationTimestamp, now)],
    ['Weight', String(spec.weight ?? 1)],
    [
      'Lanes',
      spec.lanes === 'strict' ? 'strict (high, then normal, then low)' : 'weighted (high 70 %, normal 20 %, low 10 %)',
    ],
    ['Running', usage(String(status?.running ?? 0), spec.concurrencyLimit, 'jobs')],
    ['CPU', usage(status?.allocated.cpu ?? '0', spec.resourceLimit?.cpu, 'cpu')],
    ['Memory', usage(status?.allocated.memory ?? '0', spec.resourceLimit?.memory, 'memory')],
    ['Pending', String(status?.pending ?? 0)],
    ['Oldest Pending', status?.oldestPendingTime ? waited(status.oldestPendingTime, now) : NONE],
  ];
  return `${describeFields(fields)}\n${describeConditions(status?.conditions ?? [])}`;
}

/** `fencer describe resourcequota`: each hard limit against what the namespace uses. */
export function describeResourceQuota(quota: ResourceQuota, now: Date): string {
  const hard = quota.spec.hard ?? {};
  const used = quota.status?.used;
  const fields: Array<[string, string]> = [
    ['Name', quota.metadata.name],
    ['Namespace', quota.metadata.namespace ?? 'default'],
    ['Created', withAge(quota.metadata.creationTimestamp, now)],
    ['Pending Jobs', usage(String(used?.pendingJobs ?? 0), hard.pendingJobs, 'jobs')],
    ['CPU', usage(used?.cpu ?? '0', hard.cpu, 'cpu')],
    ['Memory', usage(used?.memory ?? '0', hard.memory, 'memory')],
    ['Placement Rate', rate(quota.spec.placementRate)],
  ];
  return `${describeFields(fields)}\n${describeConditions(quota.status?.conditions ?? [])}`;
}

/**
 * `fencer describe namespace`: what the namespace uses against its quota, the job that has waited
 * longest and for how long, then each queue's placed jobs against its limit and what waits in it.
 */
export function describeNamespace(namespace: NamespaceResource, now: Date): string {
  const { status } = namespace;
  const quota = status.quota;
  const oldest = status.oldestPending;
  const fields: Array<[string, string]> = [
    ['Name', namespace.metadata.name],
    ['ResourceQuota', quota?.name ?? NONE],
    ['Pending Jobs', usage(String(status.pendingJobs), quota?.hard.pendingJobs, 'jobs')],
    ['Running Jobs', String(status.runningJobs)],
    ['CPU', usage(status.allocated.cpu, quota?.hard.cpu, 'cpu')],
    ['Memory', usage(status.allocated.memory, quota?.hard.memory, 'memory')],
    ['Placement Rate', rate(quota?.placementRate)],
    ['Oldest Pending', oldest ? `${oldest.name}, ${waited(oldest.since, now)}` : NONE],
  ];
  const rows = status.queues.map((q) => [
    q.name,
    String(q.weight),
    fraction(String(q.running), q.concurrencyLimit),
    fraction(q.allocated.cpu, q.resourceLimit?.cpu),
    fraction(q.allocated.memory, q.resourceLimit?.memory),
    String(q.pending),
    q.oldestPendingTime ? humanAge(q.oldestPendingTime, now) : NONE,
  ]);
  const queues =
    rows.length === 0
      ? `  ${NONE}`
      : indent(renderTable(['NAME', 'WEIGHT', 'RUNNING', 'CPU', 'MEMORY', 'PENDING', 'OLDEST'], rows));
  return `${describeFields(fields)}\nQueues:\n${queues}\n`;
}

/** A table cell: "used/limit", or just what is used when there is no limit. */
function fraction(used: string, limit: string | number | undefined): string {
  return limit === undefined ? used : `${used}/${limit}`;
}

/** A described value: "used of limit (n %)", or "used (no limit)". */
function usage(used: string, limit: string | number | undefined, measure: Measure): string {
  if (limit === undefined) return `${used} (no limit)`;
  const share = shareOf(used, limit, measure);
  return `${used} of ${limit}${share === null ? '' : ` (${share} %)`}`;
}

function shareOf(used: string, limit: string | number, measure: Measure): number | null {
  const amount = (value: string | number): number | null =>
    measure === 'cpu' ? parseCpu(value) : measure === 'memory' ? parseMemory(value) : Number(value);
  const u = amount(used);
  const l = amount(limit);
  if (u === null || l === null || !Number.isFinite(u) || !Number.isFinite(l) || l === 0) return null;
  return Math.round((u / l) * 100);
}

function rate(placementRate: { perSecond: number; burst?: number } | undefined): string {
  if (!placementRate) return NONE;
  return `${placementRate.perSecond}/s${placementRate.burst === undefined ? '' : `, burst ${placementRate.burst}`}`;
}

/** The reason a queue is at its limit, or "no". */
function atLimit(conditions: Condition[] | undefined): string {
  const condition = conditions?.find((c) => c.type === 'AtLimit');
  if (!condition) return NONE;
  return condition.status === 'True' ? condition.reason : 'no';
}

function waited(since: string, now: Date): string {
  return `waiting ${humanAge(since, now)} (since ${since})`;
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
