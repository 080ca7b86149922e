// The dashboard's main module: what the page holds, what it reads again when told something
// changed, and the wiring of the filters and the job detail. Reads go through the same REST API
// as the CLI (src/cli/resources.ts), on whichever replica answers (connection.ts).
import type { ClusterEvent, ClusterStatus, CronJob, Job, JobEvent, List, NodeResource, Workflow } from '../domain/resources.js';
import type { Change } from '../api/change-feed.js';
import { Connection } from './connection.js';
import { renderCronJobs, renderDetail, renderEvents, renderHeader, renderJobs, renderLive, renderNodes, renderWorkflows, type Filters } from './views.js';

type Part = 'status' | 'nodes' | 'jobs' | 'workflows' | 'cronjobs' | 'events' | 'detail';
const ALL: readonly Part[] = ['status', 'nodes', 'jobs', 'workflows', 'cronjobs', 'events', 'detail'];
/** Bursts of changes (a placement round) become one read of each part at most this often. */
const MIN_GAP_MS = 250;

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
      // The nodes' boxes are drawn from the jobs on them; the CronJobs' recent runs too.
      parts.add('jobs').add('nodes').add('cronjobs');
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
    while (wanted.size > 0) {
      const parts = new Set(wanted);
      wanted.clear();
      await read(parts);
      render();
      if (wanted.size > 0) await new Promise((resolve) => setTimeout(resolve, MIN_GAP_MS));
    }
  })().finally(() => (reading = undefined));
}

async function read(parts: Set<Part>): Promise<void> {
  const list = <T>(path: string) => connection.get<List<T>>(path).then((l) => l.items);
  try {
    await Promise.all([
      parts.has('status') &&
        connection.get<ClusterStatus>('/api/v1/status').then((s) => {
          state.status = s;
          connection.learn(s);
        }),
      (parts.has('nodes') || parts.has('jobs')) && list<Job>('/api/v1/jobs').then((j) => (state.jobs = j)),
      parts.has('nodes') && list<NodeResource>('/api/v1/nodes').then((n) => (state.nodes = n)),
      parts.has('workflows') && list<Workflow>('/api/v1/workflows').then((w) => (state.workflows = w)),
      parts.has('cronjobs') && list<CronJob>('/api/v1/cronjobs').then((c) => (state.cronjobs = c)),
      parts.has('events') && list<ClusterEvent>('/api/v1/events').then((e) => (state.events = e)),
      parts.has('detail') && readDetail(),
    ]);
    state.error = undefined;
  } catch (err) {
    state.error = (err as Error).message;
    for (const p of parts) wanted.add(p); // read again on the next change or poll
  }
}

async function readDetail(): Promise<void> {
  const key = state.selected;
  if (!key) return void (state.detail = undefined);
  const path = `/api/v1/namespaces/${key.split('/').map(encodeURIComponent).join('/jobs/')}`;
  const [job, events] = await Promise.all([connection.get<Job>(path), connection.get<List<JobEvent>>(`${path}/events`)]);
  if (state.selected === key) state.detail = { job, events: events.items };
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

const connection = new Connection(location.origin, (change) => want(partsOf(change)), () => renderLive(connection.mode, connection.pushedBy));

document.querySelector<HTMLFormElement>('form.filters')!.addEventListener('change', (event) => {
  const select = event.target as HTMLSelectElement;
  setFilter(select.name as keyof Filters, select.value);
});
// Ages and "leader for …" move with the clock, not only with changes.
setInterval(() => renderHeader(state.status, Date.now()), 1_000);

want(ALL);
connection.connect();
