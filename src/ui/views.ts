// What each part of the page shows, drawn from what the REST API returned. Each function
// replaces its part's content; none keeps state of its own.
import type {
  ClusterEvent,
  ClusterStatus,
  CronJob,
  Job,
  JobEvent,
  NodeResource,
  Workflow,
} from '../domain/resources.js';
import { formatCpu, formatMemory, parseCpu, parseMemory } from '../domain/quantity.js';
import { BOX, layoutDag } from './dag.js';
import { age, colourOf, h, phaseBadge, svg } from './dom.js';

export const PHASES = [
  'Pending',
  'Assigned',
  'Running',
  'Succeeded',
  'Failed',
  'Cancelled',
  'Skipped',
  'Dead',
] as const;
const ACTIVE = new Set(['Assigned', 'Running']);
/** More rows than this make the page slow to redraw; the filters narrow the list. */
const JOBS_SHOWN = 200;

export interface Filters {
  namespace: string;
  queue: string;
  phase: string;
}

function part(testId: string): HTMLElement {
  return document.querySelector<HTMLElement>(`[data-testid="${testId}"]`)!;
}

function body(testId: string): HTMLElement {
  return part(testId).querySelector('tbody')!;
}

export function renderHeader(status: ClusterStatus | undefined, now: number): void {
  const leader = part('leader');
  if (!status) return;
  leader.replaceChildren(
    ...(status.leader
      ? [
          'leader ',
          h('strong', { 'data-testid': 'leader-name' }, status.leader),
          ' at epoch ',
          h('strong', { 'data-testid': 'epoch' }, status.epoch),
          status.leaderSince ? ` for ${age(status.leaderSince, now)}` : '',
        ]
      : [
          h('strong', {}, 'no leader'),
          ' (epoch ',
          h('strong', { 'data-testid': 'epoch' }, status.epoch),
          ' ended): decisions wait; submissions are still accepted',
        ]),
  );
  part('replicas').replaceChildren(
    ...status.replicas.map((r) =>
      h(
        'li',
        {
          class: [r.alive ? 'alive' : '', r.leader ? 'leads' : ''].join(' '),
          title: `${r.url}, last seen ${age(r.lastSeen, now)} ago`,
        },
        r.name,
      ),
    ),
  );
}

export function renderLive(mode: string, replica: string): void {
  const live = part('live');
  live.dataset.mode = mode;
  live.textContent =
    mode === 'push'
      ? `live: pushed by ${replica}`
      : mode === 'polling'
        ? 'live: polling (push channel down)'
        : 'connecting…';
}

/** Each node as a box filled by the jobs it holds: CPU on the first bar, memory on the second. */
export function renderNodes(nodes: NodeResource[], jobs: Job[]): void {
  const onNode = new Map<string, Job[]>();
  for (const job of jobs) {
    if (job.status?.node && ACTIVE.has(job.status.phase))
      onNode.set(job.status.node, [...(onNode.get(job.status.node) ?? []), job]);
  }
  let cpu = 0;
  let allocated = 0;
  const boxes = nodes.map((node) => {
    const capacity = {
      cpu: parseCpu(node.spec.capacity.cpu) ?? 1,
      memory: parseMemory(node.spec.capacity.memory) ?? 1,
    };
    const held = {
      cpu: parseCpu(node.status.allocated.cpu) ?? 0,
      memory: parseMemory(node.status.allocated.memory) ?? 0,
    };
    if (node.status.phase === 'Ready') {
      cpu += capacity.cpu;
      allocated += held.cpu;
    }
    const its = onNode.get(node.metadata.name) ?? [];
    const bar = (resource: 'cpu' | 'memory', parse: (v: string | number) => number | null) =>
      h(
        'div',
        { class: 'bar', title: resource },
        ...its.map((job) =>
          h('span', {
            title: `${job.metadata.namespace}/${job.metadata.name} (${job.status!.phase})`,
            'data-job': job.metadata.name,
            style: `width: ${(100 * (parse(job.spec.resources[resource]) ?? 0)) / capacity[resource]}%; background: ${colourOf(job.metadata.name)}`,
          }),
        ),
      );
    return h(
      'div',
      {
        class: `node ${node.status.phase}`,
        'data-testid': `node-${node.metadata.name}`,
        'data-phase': node.status.phase,
        'data-jobs': String(its.length),
      },
      h(
        'div',
        { class: 'name' },
        node.metadata.name,
        h('span', {}, node.status.phase === 'Dead' ? 'dead' : node.status.connected ? '' : 'not connected'),
      ),
      bar('cpu', parseCpu),
      bar('memory', parseMemory),
      h(
        'div',
        { class: 'figures' },
        `CPU ${formatCpu(held.cpu)}/${formatCpu(capacity.cpu)} · memory ${formatMemory(held.memory)}/${formatMemory(capacity.memory)} · ${its.length} jobs`,
      ),
    );
  });
  part('nodes').replaceChildren(...(boxes.length ? boxes : [h('p', { class: 'empty' }, 'no nodes registered')]));
  part('nodes-summary').textContent = nodes.length
    ? `${nodes.filter((n) => n.status.phase === 'Ready').length} ready of ${nodes.length}; CPU ${cpu ? Math.round((100 * allocated) / cpu) : 0} % allocated`
    : '';
}

export function renderJobs(
  jobs: Job[],
  filters: Filters,
  selected: string | undefined,
  now: number,
  select: (job: Job) => void,
  filterPhase: (phase: string) => void,
): void {
  const counts = new Map<string, number>();
  for (const job of jobs)
    counts.set(job.status?.phase ?? 'Pending', (counts.get(job.status?.phase ?? 'Pending') ?? 0) + 1);
  part('phases').replaceChildren(
    ...PHASES.filter((p) => counts.has(p)).map((p) => {
      const button = h(
        'button',
        { type: 'button', style: `background: var(--${p})`, 'data-testid': `count-${p}` },
        `${p} ${counts.get(p)}`,
      );
      button.onclick = () => filterPhase(p);
      return button;
    }),
  );
  const form = document.querySelector<HTMLFormElement>('form.filters')!;
  fillSelect(
    form.elements.namedItem('namespace') as HTMLSelectElement,
    jobs.map((j) => j.metadata.namespace ?? 'default'),
    filters.namespace,
  );
  fillSelect(
    form.elements.namedItem('queue') as HTMLSelectElement,
    jobs.map((j) => j.spec.queue ?? 'default'),
    filters.queue,
  );
  fillSelect(form.elements.namedItem('phase') as HTMLSelectElement, [...PHASES], filters.phase);
  const matching = jobs
    .filter(
      (j) =>
        (!filters.namespace || j.metadata.namespace === filters.namespace) &&
        (!filters.queue || (j.spec.queue ?? 'default') === filters.queue) &&
        (!filters.phase || j.status?.phase === filters.phase),
    )
    .sort(
      (a, b) =>
        (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') ||
        a.metadata.name.localeCompare(b.metadata.name),
    );
  part('jobs-shown').textContent =
    matching.length > JOBS_SHOWN ? `the newest ${JOBS_SHOWN} of ${matching.length}` : `${matching.length} jobs`;
  body('jobs').replaceChildren(
    ...matching.slice(0, JOBS_SHOWN).map((job) => {
      const key = `${job.metadata.namespace}/${job.metadata.name}`;
      const row = h(
        'tr',
        { class: key === selected ? 'selected' : undefined, 'data-job': key, 'data-phase': job.status?.phase },
        h('td', {}, job.metadata.namespace),
        h('td', {}, job.metadata.name),
        h('td', {}, job.spec.queue ?? 'default'),
        h('td', {}, phaseBadge(job.status?.phase ?? 'Pending')),
        h('td', {}, job.status?.node ?? ''),
        h('td', {}, job.status?.attempt ?? 0),
        h('td', {}, String(job.spec.resources.cpu)),
        h('td', {}, String(job.spec.resources.memory)),
        h('td', {}, age(job.metadata.creationTimestamp, now)),
      );
      row.onclick = () => select(job);
      return row;
    }),
  );
}

function fillSelect(select: HTMLSelectElement, values: string[], chosen: string): void {
  const options = [...new Set(values)].sort();
  if (chosen && !options.includes(chosen)) options.push(chosen);
  const wanted = ['', ...options];
  if ([...select.options].map((o) => o.value).join('\n') !== wanted.join('\n')) {
    select.replaceChildren(...wanted.map((v) => h('option', { value: v }, v || 'all')));
  }
  select.value = chosen;
}

/** A job and its history: every assignment, the epoch that made it, the node, the reason. */
export function renderDetail(
  detail: { job: Job; events: JobEvent[] } | undefined,
  now: number,
  close: () => void,
): void {
  const section = part('job-detail');
  if (!detail) {
    section.hidden = true;
    return;
  }
  const { job, events } = detail;
  const status = job.status;
  const closer = h('button', { type: 'button' }, 'close');
  closer.onclick = close;
  const facts: Array<[string, string]> = [
    ['queue', `${job.spec.queue ?? 'default'} (priority ${job.spec.priority ?? 'normal'})`],
    ['resources', `CPU ${job.spec.resources.cpu}, memory ${job.spec.resources.memory}, for ${job.spec.duration}`],
    ['node', status?.node ?? '—'],
    ['attempt', String(status?.attempt ?? 0)],
    ['assignment', status?.assignment ? `${status.assignment} (epoch ${status.epoch})` : '—'],
    ['created', `${job.metadata.creationTimestamp} (${age(job.metadata.creationTimestamp, now)} ago)`],
  ];
  for (const c of status?.conditions ?? [])
    facts.push([`condition ${c.type}`, `${c.status}: ${c.reason}${c.message ? ` — ${c.message}` : ''}`]);
  section.hidden = false;
  section.replaceChildren(
    h('h2', {}, `job ${job.metadata.namespace}/${job.metadata.name}`, phaseBadge(status?.phase ?? 'Pending'), closer),
    h('dl', {}, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h(
      'table',
      { 'data-testid': 'job-history' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['time', 'type', 'reason', 'object', 'epoch', 'node', 'by', 'message'].map((c) => h('th', {}, c)),
        ),
      ),
      h(
        'tbody',
        {},
        ...[...events]
          .reverse()
          .map((e) =>
            h(
              'tr',
              { class: e.type === 'Warning' ? 'warning' : undefined },
              h('td', {}, e.time.replace('T', ' ').replace('Z', '')),
              h('td', {}, e.type),
              h('td', {}, e.reason),
              h('td', {}, e.object),
              h('td', {}, e.epoch ?? ''),
              h('td', {}, e.node ?? ''),
              h('td', {}, e.replica ?? ''),
              h('td', { class: 'message' }, e.message),
            ),
          ),
      ),
    ),
  );
}

/** Each workflow as its DAG: columns are stages, edges run from a need to what needs it. */
export function renderWorkflows(workflows: Workflow[]): void {
  const cards = workflows.map((wf) => {
    const needs = new Map(wf.spec.jobs.map((j) => [j.name, j.needs ?? []]));
    const { boxes, edges, width, height } = layoutDag(wf.status?.jobs ?? [], needs);
    const picture = svg(
      'svg',
      { width, height, viewBox: `0 0 ${width} ${height}` },
      ...edges.map((e) =>
        svg('path', {
          d: `M${e.from.x + BOX.width},${e.from.y + BOX.height / 2} C${e.from.x + BOX.width + BOX.gapX / 2},${e.from.y + BOX.height / 2} ${e.to.x - BOX.gapX / 2},${e.to.y + BOX.height / 2} ${e.to.x},${e.to.y + BOX.height / 2}`,
          fill: 'none',
          stroke: '#9aa3b5',
        }),
      ),
      ...boxes.map((b) =>
        svg(
          'g',
          { 'data-job': b.name, 'data-phase': b.phase },
          svg('rect', { x: b.x, y: b.y, width: BOX.width, height: BOX.height, rx: 4, fill: `var(--${b.phase}, #888)` }),
          svg('text', { x: b.x + 6, y: b.y + 16 }, `${b.name}`),
          svg('title', {}, `${b.name}: ${b.phase}`),
        ),
      ),
    );
    return h(
      'div',
      { class: 'workflow', 'data-testid': `workflow-${wf.metadata.name}` },
      h('div', {}, `${wf.metadata.namespace}/${wf.metadata.name} `, phaseBadge(wf.status?.phase ?? 'Pending')),
      picture,
    );
  });
  part('workflows').replaceChildren(...(cards.length ? cards : [h('p', { class: 'empty' }, 'no workflows')]));
}

/** CronJobs with their next occurrence and their most recent runs (their jobs, by label). */
export function renderCronJobs(cronjobs: CronJob[], jobs: Job[], now: number): void {
  if (cronjobs.length === 0)
    return void body('cronjobs').replaceChildren(h('tr', {}, h('td', { class: 'empty', colspan: '6' }, 'no cronjobs')));
  body('cronjobs').replaceChildren(
    ...cronjobs.map((cj) => {
      const runs = jobs
        .filter(
          (j) =>
            j.metadata.namespace === cj.metadata.namespace &&
            j.metadata.labels?.['fencer.dev/cronjob'] === cj.metadata.name,
        )
        .sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))
        .slice(0, 8);
      const next = cj.status?.nextScheduleTime;
      return h(
        'tr',
        { 'data-cronjob': cj.metadata.name },
        h('td', {}, `${cj.metadata.namespace}/${cj.metadata.name}`),
        h('td', {}, `${cj.spec.schedule} ${cj.spec.timeZone ?? 'UTC'}${cj.spec.suspend ? ' (suspended)' : ''}`),
        h(
          'td',
          {},
          next
            ? `${next.replace('T', ' ').replace(/\.\d+Z|Z/, ' UTC')} (in ${age(new Date(now).toISOString(), Date.parse(next))})`
            : '—',
        ),
        h('td', {}, cj.status?.lastScheduleTime ? `${age(cj.status.lastScheduleTime, now)} ago` : '—'),
        h('td', {}, cj.status?.activeCount ?? 0),
        h(
          'td',
          { class: 'runs' },
          ...runs.map((j) =>
            h('span', {
              title: `${j.metadata.name}: ${j.status?.phase}`,
              'data-job': j.metadata.name,
              'data-phase': j.status?.phase,
              style: `background: var(--${j.status?.phase ?? 'Pending'})`,
            }),
          ),
        ),
      );
    }),
  );
}

export function renderEvents(events: ClusterEvent[], now: number): void {
  body('events').replaceChildren(
    ...events.map((e) =>
      h(
        'tr',
        { class: e.type === 'Warning' ? 'warning' : undefined, 'data-reason': e.reason },
        h('td', { title: e.time }, `${age(e.time, now)} ago`),
        h('td', {}, e.type),
        h('td', {}, e.reason),
        h('td', {}, e.object),
        h('td', {}, e.epoch ?? ''),
        h('td', { class: 'message' }, e.message),
      ),
    ),
  );
}
