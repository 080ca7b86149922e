// What `get` and `describe` print. Pure functions of the objects and a clock (`now` is
// passed in) so the formats, which scripts parse, are pinned by table tests.
import YAML from 'yaml';
import {
  API_VERSION,
  type ClusterEvent,
  type Condition,
  type Job,
  type JobEvent,
  type List,
  type NodeResource,
} from '../domain/resources.js';
import { parseCpu, parseMemory } from '../domain/quantity.js';
import { renderTable } from '../report/table.js';
import { humanDuration } from '../domain/duration.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

const NONE = '<none>';
const UNKNOWN = '<unknown>';

export function parseOutputFormat(value: string | undefined): OutputFormat {
  const format = value ?? 'table';
  if ((OUTPUT_FORMATS as readonly string[]).includes(format)) return format as OutputFormat;
  throw new Error(`unknown output format "${format}" (use one of: wide, json, yaml, name)`);
}

export interface RenderOptions {
  format: OutputFormat;
  now: Date;
  /** Adds a NAMESPACE column, as kubectl does for -A. */
  allNamespaces?: boolean;
  /** A named object was asked for: json/yaml print the object itself, not a list. */
  single?: boolean;
}

export function renderJobs(jobs: Job[], options: RenderOptions): string {
  return render(jobs, 'Job', options, () => jobsTable(jobs, options));
}

export function renderNodes(nodes: NodeResource[], options: RenderOptions): string {
  return render(nodes, 'Node', options, () => nodesTable(nodes, options));
}

/** A list in the asked format: the document (json, yaml), the names, or the table `table` draws. */
export function render<T extends { kind: string; metadata: { name: string } }>(
  items: T[],
  kind: T['kind'],
  options: RenderOptions,
  table: () => string,
): string {
  const document = options.single && items.length === 1 ? items[0] : listOf(`${kind}List`, items);
  switch (options.format) {
    case 'json':
      return JSON.stringify(document, null, 2) + '\n';
    case 'yaml':
      return YAML.stringify(document);
    case 'name':
      return items.map((item) => `${kind.toLowerCase()}.fencer.dev/${item.metadata.name}\n`).join('');
    default:
      return table();
  }
}

/** `fencer get events`: what happened to the cluster, newest last, as kubectl get events prints. */
export function renderClusterEvents(events: ClusterEvent[], options: RenderOptions): string {
  const document = listOf('EventList', events);
  if (options.format === 'json') return JSON.stringify(document, null, 2) + '\n';
  if (options.format === 'yaml') return YAML.stringify(document);
  const rows = [...events]
    .reverse()
    .map((e) => [
      humanAge(e.time, options.now),
      e.type,
      e.reason,
      e.object,
      e.epoch === null ? NONE : String(e.epoch),
      e.message,
    ]);
  return renderTable(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'EPOCH', 'MESSAGE'], rows);
}

/** The list envelope, rebuilt so its key order is the documented one whatever the server sent. */
export function listOf<T>(kind: string, items: T[]): List<T> {
  return { apiVersion: API_VERSION, kind, items };
}

function jobsTable(jobs: Job[], { format, now, allNamespaces }: RenderOptions): string {
  const wide = format === 'wide';
  const header = ['NAME', 'PHASE', 'NODE', 'ATTEMPT', 'AGE'];
  if (wide) header.push('CPU', 'MEMORY', 'DURATION', 'EPOCH', 'ASSIGNMENT', 'REASON');
  if (allNamespaces) header.unshift('NAMESPACE');
  const rows = jobs.map((job) => {
    const status = job.status;
    const row = [
      job.metadata.name,
      status?.phase ?? 'Pending',
      status?.node ?? NONE,
      String(status?.attempt ?? 0),
      humanAge(job.metadata.creationTimestamp, now),
    ];
    if (wide) {
      row.push(
        String(job.spec.resources.cpu),
        String(job.spec.resources.memory),
        job.spec.duration,
        status?.epoch === undefined ? NONE : String(status.epoch),
        status?.assignment ?? NONE,
        latestCondition(status?.conditions ?? [])?.reason || NONE,
      );
    }
    if (allNamespaces) row.unshift(job.metadata.namespace ?? 'default');
    return row;
  });
  return renderTable(header, rows);
}

function nodesTable(nodes: NodeResource[], { format, now }: RenderOptions): string {
  const wide = format === 'wide';
  // AGE is the age of the last heartbeat: what an operator looks at a node list for.
  const header = ['NAME', 'STATUS', 'CPU', 'MEMORY', 'AGE'];
  if (wide) header.push('LABELS', 'CONNECTED');
  const rows = nodes.map((node) => {
    const { capacity } = node.spec;
    const { allocated } = node.status;
    const row = [
      node.metadata.name,
      node.status.phase,
      `${allocated.cpu}/${capacity.cpu}`,
      `${allocated.memory}/${capacity.memory}`,
      humanAge(node.status.lastHeartbeatTime, now),
    ];
    if (wide) row.push(formatLabels(node.metadata.labels, ','), String(node.status.connected));
    return row;
  });
  return renderTable(header, rows);
}

export function humanAge(timestamp: string | undefined, now: Date): string {
  const at = timestamp === undefined ? NaN : Date.parse(timestamp);
  return Number.isNaN(at) ? UNKNOWN : humanDuration(now.getTime() - at);
}

/** The condition that explains the current phase: the one that changed last. */
function latestCondition(conditions: Condition[]): Condition | undefined {
  let latest: Condition | undefined;
  for (const condition of conditions) {
    if (!latest || Date.parse(condition.lastTransitionTime) >= Date.parse(latest.lastTransitionTime)) {
      latest = condition;
    }
  }
  return latest;
}

export function formatLabels(labels: Record<string, string> | undefined, separator: string): string {
  const pairs = Object.entries(labels ?? {}).map(([k, v]) => `${k}=${v}`);
  return pairs.length > 0 ? pairs.join(separator) : NONE;
}

/** `fencer describe job`: kubectl-describe-like text, one fact per line, conditions last. */
export function describeJob(job: Job, now: Date, events: JobEvent[] = []): string {
  const status = job.status;
  const attempt = status?.attempt ?? 0;
  const fields: Array<[string, string]> = [
    ['Name', job.metadata.name],
    ['Namespace', job.metadata.namespace ?? 'default'],
    ['Labels', formatLabels(job.metadata.labels, '\n')],
    ['Created', withAge(job.metadata.creationTimestamp, now)],
    ['Phase', status?.phase ?? 'Pending'],
    ['Node', status?.node ?? NONE],
    ['Attempt', job.spec.maxAttempts === undefined ? String(attempt) : `${attempt} of ${job.spec.maxAttempts}`],
    ['Assignment', status?.assignment ?? NONE],
    ['Epoch', status?.epoch === undefined ? NONE : String(status.epoch)],
    ['Resources', `cpu=${job.spec.resources.cpu}, memory=${job.spec.resources.memory}`],
    ['Duration', job.spec.duration],
    ['Node-Selector', formatLabels(job.spec.nodeSelector, '\n')],
    ['Queue', job.spec.queue ?? 'default'],
    ['Priority', String(job.spec.priority ?? 'normal')],
    ['Start Time', withAge(status?.startTime, now)],
    ['Completion Time', withAge(status?.completionTime, now)],
  ];
  return `${describeFields(fields)}\n${describeConditions(status?.conditions ?? [])}${describeEvents(events, now)}`;
}

/** kubectl describe's Events: each change of the job and its runs, oldest first, from the history. */
export function describeEvents(events: JobEvent[], now: Date): string {
  return describeSection(
    'Events',
    ['Type', 'Reason', 'Age', 'From', 'Message'],
    events.map((e) => [e.type, e.reason, humanAge(e.time, now), e.replica ?? NONE, e.message]),
  );
}

/** `fencer top nodes`: what each node's jobs hold against its capacity, as kubectl top prints usage. */
export function renderTopNodes(nodes: NodeResource[]): string {
  const header = ['NAME', 'CPU(cores)', 'CPU%', 'MEMORY(bytes)', 'MEMORY%', 'STATUS'];
  const percent = (used: number | null, total: number | null) =>
    used === null || !total ? NONE : `${Math.round((100 * used) / total)}%`;
  const rows = nodes.map((node) => {
    const { capacity } = node.spec;
    const { allocated } = node.status;
    return [
      node.metadata.name,
      `${allocated.cpu}/${capacity.cpu}`,
      percent(parseCpu(allocated.cpu), parseCpu(capacity.cpu)),
      `${allocated.memory}/${capacity.memory}`,
      percent(parseMemory(allocated.memory), parseMemory(capacity.memory)),
      node.status.phase,
    ];
  });
  return renderTable(header, rows);
}

/** `Label:  value` lines, values aligned in one column, as kubectl describe prints them. */
export function describeFields(fields: Array<[string, string]>): string {
  const width = Math.max(...fields.map(([label]) => label.length)) + 2;
  const lines = fields.map(([label, value]) => {
    // Multi-line values (labels) continue under the value column, as kubectl does.
    const [first, ...rest] = value.split('\n');
    return [`${label}:`.padEnd(width) + first, ...rest.map((more) => ' '.repeat(width) + more)].join('\n');
  });
  return lines.join('\n');
}

/** The conditions table that ends a description. */
export function describeConditions(conditions: Condition[]): string {
  return describeSection(
    'Conditions',
    ['Type', 'Status', 'Reason', 'Message'],
    conditions.map((c) => [c.type, c.status, c.reason || NONE, c.message || NONE]),
  );
}

/** A titled table of a description, indented under its title and ruled, as kubectl prints it. */
function describeSection(title: string, header: string[], rows: string[][]): string {
  if (rows.length === 0) return `${title}:  ${NONE}\n`;
  const rule = header.map((h) => '-'.repeat(h.length));
  const table = renderTable(header, [rule, ...rows])
    .trimEnd()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  return `${title}:\n${table}\n`;
}

export function withAge(timestamp: string | undefined, now: Date): string {
  return timestamp === undefined ? NONE : `${timestamp} (${humanAge(timestamp, now)} ago)`;
}
