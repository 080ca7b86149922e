// Lists and gets of Events. A list is read at a settled cut (feed.ts), so a watch from its
// resourceVersion streams exactly what it could not hold; what it reads is bounded whatever the
// history holds:
//
//   one job named (kubectl describe sends its uid, kubectl events --for its kind and name)
//       that job's rows by the history_job index: its newest MOST_OF_ONE_JOB, however old
//   anything else
//       of each table's newest MOST_LOOKED_AT ids, those of the last hour (Kubernetes keeps
//       events an hour), in the namespace asked for
//
// then selected (field selectors on any field: involvedObject.* or regarding.*, type, reason...)
// and paged as every other list (selectors.ts), sorted by namespace and name.
import type { Db } from '../../../store/db.js';
import { getJob } from '../../../store/jobs.js';
import {
  clusterEvent,
  historyEvent,
  historyOfJob,
  recentClusterEvents,
  recentHistory,
  type Window,
} from '../../../store/events.js';
import { HttpError } from '../../../errors/http-error.js';
import { API_VERSION } from '../../../domain/resources.js';
import type { ObjectQuery } from '../selectors.js';
import { selectObjects } from '../selectors.js';
import { formatPosition, parsePosition, settledCut, type Position } from './feed.js';
import {
  CLUSTER_EVENTS_NAMESPACE,
  eventName,
  fromClusterEvent,
  fromHistory,
  parseEventName,
  toCoreEvent,
  toEventsV1,
  type FencerEvent,
  type KubeEvent,
} from './present.js';

/** How far back a list goes: Kubernetes' default event TTL. */
export const EVENTS_WINDOW_SECONDS = 60 * 60;
/** The newest ids of each table a list looks at, at most. */
export const MOST_LOOKED_AT = 5_000;
/** The newest rows of one job a list of its events reads, at most. */
export const MOST_OF_ONE_JOB = 1_000;
/** How long a read waits for transactions older than it to end (feed.ts). */
export const SETTLE_WAIT_MS = 3_000;

/** Which Kubernetes shape: core v1 or events.k8s.io/v1. */
export type EventShape = 'core' | 'events.k8s.io';

export function render(shape: EventShape, event: FencerEvent, resourceVersion: string): KubeEvent {
  return shape === 'core' ? toCoreEvent(event, resourceVersion) : toEventsV1(event, resourceVersion);
}

/** What a list reads, from the equalities of its field selector. */
export interface ReadPlan {
  history: { uid: string } | { job: { namespace: string; name: string } } | 'recent' | null;
  cluster: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Narrows what is read; the rows read are then selected by the whole selector, so a term it does
 * not know (or a `!=`) reads more. One thing is read less: a job named that exists now is read
 * by its uid, so an earlier job of the same name, deleted within the hour, is left out.
 */
export function planOf(namespace: string | null, fieldSelector: string | undefined): ReadPlan {
  const about = referenceTerms(fieldSelector);
  if (about.apiVersion !== undefined && about.apiVersion !== API_VERSION) return { history: null, cluster: false };
  const kind = about.kind;
  // Cluster events are about objects without a namespace or a uid, and live in `default`.
  const cluster =
    kind !== 'Job' &&
    about.uid === undefined &&
    (about.namespace ?? '') === '' &&
    (namespace === null || namespace === CLUSTER_EVENTS_NAMESPACE);
  if (kind !== undefined && kind !== 'Job') return { history: null, cluster };
  if (about.uid !== undefined)
    return { history: UUID.test(about.uid) ? { uid: about.uid.toLowerCase() } : null, cluster };
  const jobNamespace = namespace ?? about.namespace;
  if (about.name !== undefined && jobNamespace)
    return { history: { job: { namespace: jobNamespace, name: about.name } }, cluster };
  return { history: 'recent', cluster };
}

/** The `=` and `==` terms on involvedObject.* (or regarding.*, the same fields in events.k8s.io). */
function referenceTerms(
  selector: string | undefined,
): Partial<Record<'kind' | 'name' | 'namespace' | 'uid' | 'apiVersion', string>> {
  const terms: Record<string, string> = {};
  for (const raw of (selector ?? '').split(',')) {
    const m = /^\s*(?:involvedObject|regarding)\.(kind|name|namespace|uid|apiVersion)\s*==?\s*(.*?)\s*$/.exec(raw);
    if (m) terms[m[1]!] = m[2]!;
  }
  return terms;
}

/** The events a plan reads, up to the cut, in the namespace asked for (null: all). */
export async function readPlanned(
  db: Db,
  plan: ReadPlan,
  namespace: string | null,
  cut: Position,
): Promise<FencerEvent[]> {
  const window = (upTo: number): Window => ({ cut: upTo, most: MOST_LOOKED_AT, windowSeconds: EVENTS_WINDOW_SECONDS });
  const history = async () => {
    const { history } = plan;
    if (history === null) return [];
    if (history === 'recent') return recentHistory(db, window(cut.history), namespace);
    if ('uid' in history) return historyOfJob(db, history.uid, cut.history, MOST_OF_ONE_JOB);
    const job = await getJob(db, history.job.namespace, history.job.name);
    // A job deleted since: its rows of the last hour, selected by name like any others.
    return job
      ? historyOfJob(db, job.uid, cut.history, MOST_OF_ONE_JOB)
      : recentHistory(db, window(cut.history), history.job.namespace);
  };
  const [rows, clusterRows] = await Promise.all([
    history(),
    plan.cluster ? recentClusterEvents(db, window(cut.cluster)) : [],
  ]);
  const events = [...rows.map(fromHistory), ...clusterRows.map(fromClusterEvent)];
  return namespace === null ? events : events.filter((e) => e.namespace === namespace);
}

export interface EventList {
  items: KubeEvent[];
  /** The cut it was read at: its resourceVersion. */
  at: Position;
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export async function listEvents(
  db: Db,
  shape: EventShape,
  namespace: string | null,
  query: ObjectQuery,
): Promise<EventList> {
  const token = query.continue ? parseContinue(query.continue) : null;
  // The pages after the first read at the first's cut: together they are one list.
  const cut = token?.cut ?? (await settledCut(db, SETTLE_WAIT_MS));
  const resourceVersion = formatPosition(cut);
  const events = await readPlanned(db, planOf(namespace, query.fieldSelector), namespace, cut);
  const objects = events.map((event) => render(shape, event, resourceVersion));
  const found = selectObjects(objects, {
    labelSelector: query.labelSelector,
    fieldSelector: query.fieldSelector,
    limit: query.limit,
    continue: token?.page,
  });
  return {
    items: found.items,
    at: cut,
    resourceVersion,
    ...(found.continue ? { continue: formatContinue(cut, found.continue), remainingItemCount: found.remaining } : {}),
  };
}

/** One Event by name: the row its name names, if it lives in that namespace. */
export async function getEvent(
  db: Db,
  shape: EventShape,
  namespace: string,
  name: string,
): Promise<KubeEvent | undefined> {
  const row = parseEventName(name);
  if (!row) return undefined;
  const cut = await settledCut(db, SETTLE_WAIT_MS);
  let event: FencerEvent | undefined;
  if (row.table === 'history') {
    const found = await historyEvent(db, row.id);
    event = found && fromHistory(found);
  } else {
    const found = await clusterEvent(db, row.id);
    event = found && fromClusterEvent(found);
  }
  if (!event || event.namespace !== namespace || eventName(event.table, event.regarding.name, event.id) !== name)
    return undefined;
  return render(shape, event, formatPosition(cut));
}

/** A continue token: the list's cut and where the next page starts (selectors.ts's token). */
function formatContinue(cut: Position, page: string): string {
  return Buffer.from(JSON.stringify({ cut: formatPosition(cut), page }), 'utf8').toString('base64url');
}

function parseContinue(token: string): { cut: Position; page: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { cut?: unknown; page?: unknown };
    const cut = typeof parsed.cut === 'string' ? parsePosition(parsed.cut) : null;
    if (cut && typeof parsed.page === 'string') return { cut, page: parsed.page };
  } catch {
    // not JSON: answered below
  }
  throw new HttpError(400, `continue: ${JSON.stringify(token)} is not a continue token of an events list`);
}
