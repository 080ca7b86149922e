// The dashboard's main module: what the page holds, what it reads again when told something
// changed, and the wiring of the filters and the job detail. Reads go through the same REST API
// as the CLI (src/cli/resources.ts), on whichever replica answers (connection.ts).
import type {
  ClusterEvent,
  ClusterStatus,
  CronJob,
  Job,
  JobEvent,
  List,
  NodeResource,
  Workflow,
} from '../domain/resources.js';
import type { Change } from '../domain/change.js';
import { Connection, ReadError } from './connection.js';
import { readAllPages } from '../domain/list-pages.js';
import {
  renderCronJobs,
  renderDetail,
  renderEvents,
  renderHeader,
  renderJobs,
  renderLive,
  renderNodes,
  renderWorkflows,
  type Filters,
} from './views.js';

type Part = 'status' | 'nodes' | 'jobs' | 'workflows' | 'cronjobs' | 'events' | 'detail';
const ALL: readonly Part[] = ['status', 'nodes', 'jobs', 'workflows', 'cronjobs', 'events', 'detail'];
/**
 * Bursts of changes (a placement round) become one read of each part at most this often, and
 * never more often than READ_SHARE allows: a page whose reads take long (a big cluster's job
 * list) reads less often, so that it never keeps the API busier than that share of its time.
 */
const MIN_GAP_MS = 250;
const READ_SHARE = 0.2;
/** ...but a change is shown within this, however long reads take. */
const MAX_GAP_MS = 5_000;
/** A part whose read failed is read again after this, doubling up to RETRY_MAX_MS. */
const RETRY_MS = 500;
const RETRY_MAX_MS = 10_000;
/**
 * Everything is read again this often even while pushed: a bound on how stale the page can be
 * whatever the push missed (a transaction held open for long holds the watch feed back).
 */
const FULL_READ_MS = 60_000;

const state: {
  status?: ClusterStatus;
  nodes: NodeResource[];
  jobs: Job[];
  workflows: Workflow[];
  cronjobs: CronJob[];
  events: ClusterEvent[];
  selected?: string;
  detail?: { job: Job; events: JobEvent[] };
  filters: Filters;
  error?: string;
} = { nodes: [], jobs: [], workflows: [], cronjobs: [], events: [], filters: { namespace: '', queue: '', phase: '' } };

const wanted = new Set<Part>();
let reading: Promise<void> | undefined;

function partsOf(change: Change): Part[] {
  if (change.all) return [...ALL];
  const parts = new Set<Part>();
  if (change.status) parts.add('status');
  if (change.events) parts.add('events');
  for (const kind of change.kinds) {
    if (kind === 'Job') {
      // The nodes' boxes, the workflows' DAGs and the CronJobs' recent runs are drawn from jobs.
      parts.add('jobs').add('nodes').add('workflows').add('cronjobs');
      if (state.selected && (!change.jobs || change.jobs.includes(state.selected))) parts.add('detail');
    }
    if (kind === 'Node') parts.add('nodes').add('status');
    if (kind === 'Workflow') parts.add('workflows');
    if (kind === 'CronJob') parts.add('cronjobs');
  }
  return [...parts];
}

function want(parts: Iterable<Part>): void {
  for (const p of parts) wanted.add(p);
  reading ??= (async () => {
    let retryMs = RETRY_MS;
    while (wanted.size > 0) {
      const parts = new Set(wanted);
      wanted.clear();
      const startedAt = performance.now();
      const failed = await read(parts);
      const gapMs = Math.min(
        MAX_GAP_MS,
        Math.max(MIN_GAP_MS, ((performance.now() - startedAt) * (1 - READ_SHARE)) / READ_SHARE),
      );
      render();
      for (const p of failed) wanted.add(p);
      // Failed reads wait, doubling, so a replica in trouble is not asked four times a second.
      retryMs = failed.length > 0 ? Math.min(2 * retryMs, RETRY_MAX_MS) : RETRY_MS;
      if (wanted.size > 0) await new Promise((resolve) => setTimeout(resolve, failed.length > 0 ? retryMs : gapMs));
    }
  })().finally(() => {
    reading = undefined;
    if (wanted.size > 0) want([]); // asked for while the loop was ending
  });
}

/** Reads the parts; returns those whose read failed. */
async function read(parts: Set<Part>): Promise<Part[]> {
  const list = <T>(path: string) => connection.get<List<T>>(path).then((l) => l.items);
  // The lists served in pages, read whole.
  const all = <T>(path: string) => readAllPages(path, (next) => connection.get<List<T>>(next));
  const reads: Array<[Part, () => Promise<unknown>]> = [
    [
      'status',
      async () => {
        state.status = await connection.get<ClusterStatus>('/api/v1/status');
        connection.learn(state.status);
      },
    ],
    // Every job, a page at a time: the nodes' boxes and the counts by phase need them all.
    ['jobs', async () => (state.jobs = await all<Job>('/api/v1/jobs'))],
    ['nodes', async () => (state.nodes = await all<NodeResource>('/api/v1/nodes'))],
    ['workflows', async () => (state.workflows = await all<Workflow>('/api/v1/workflows'))],
    ['cronjobs', async () => (state.cronjobs = await all<CronJob>('/api/v1/cronjobs'))],
    ['events', async () => (state.events = await list<ClusterEvent>('/api/v1/clusterevents'))],
    ['detail', readDetail],
  ];
  // The nodes' boxes are drawn from the jobs, so reading nodes reads the jobs too.
  if (parts.has('nodes')) parts.add('jobs');
  const chosen = reads.filter(([part]) => parts.has(part));
  const results = await Promise.allSettled(chosen.map(([, run]) => run()));
  const failed = chosen.filter((_, i) => results[i]!.status === 'rejected').map(([part]) => part);
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
  state.error = errors.length ? errors.join('; ') : undefined;
  return failed;
}

async function readDetail(): Promise<void> {
  const key = state.selected;
  if (!key) return void (state.detail = undefined);
  const path = `/api/v1/namespaces/${key.split('/').map(encodeURIComponent).join('/jobs/')}`;
  try {
    const [job, events] = await Promise.all([
      connection.get<Job>(path),
      connection.get<List<JobEvent>>(`${path}/events`),
    ]);
    if (state.selected === key) state.detail = { job, events: events.items };
  } catch (err) {
    if (!(err instanceof ReadError && err.status === 404)) throw err;
    // Deleted (a CronJob's old runs are): nothing more to show of it.
    if (state.selected === key) {
      state.selected = undefined;
      state.detail = undefined;
    }
  }
}

function render(): void {
  const now = Date.now();
  renderHeader(state.status, now);
  renderNodes(state.nodes, state.jobs);
  renderJobs(state.jobs, state.filters, state.selected, now, select, (phase) => setFilter('phase', phase));
  renderDetail(state.detail, now, () => select(undefined));
  renderWorkflows(state.workflows);
  renderCronJobs(state.cronjobs, state.jobs, now);
  renderEvents(state.events, now);
  document.body.dataset.error = state.error ?? '';
}

function select(job: Job | undefined): void {
  state.selected = job ? `${job.metadata.namespace}/${job.metadata.name}` : undefined;
  state.detail = undefined;
  render();
  want(['detail']);
}

function setFilter(name: keyof Filters, value: string): void {
  state.filters[name] = value;
  render();
}

const connection = new Connection(
  location.origin,
  (change) => want(partsOf(change)),
  () => renderLive(connection.mode, connection.pushedBy),
);

document.querySelector<HTMLFormElement>('form.filters')!.addEventListener('change', (event) => {
  const select = event.target as HTMLSelectElement;
  setFilter(select.name as keyof Filters, select.value);
});
// Ages and "leader for …" move with the clock, not only with changes.
setInterval(() => renderHeader(state.status, Date.now()), 1_000);

setInterval(() => want(ALL), FULL_READ_MS);

want(ALL);
connection.connect();
