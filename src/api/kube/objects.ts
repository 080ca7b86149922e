// Where each kind's objects come from, for the Kubernetes routes: the same store calls and
// presenters as the /api/v1 routes, so an object reads the same on both paths.
import type { ApiContext } from '../context.js';
import type { KubeKind } from './kinds.js';
import type { KubeObject } from './table.js';
import { getJob, listJobPage, listJobs } from '../../store/jobs.js';
import { getWorkflow, listWorkflowPage, listWorkflows } from '../../workflows/store.js';
import { getCronJob, listCronJobPage, listCronJobs } from '../../cron/store.js';
import { getQueue, listQueuePage, listQueues, listQuotaPage, listQuotas } from '../../fair-share/store.js';
import { listNodePage, listNodes } from '../../agent-protocol/nodes-store.js';
import {
  presentCronJob,
  presentJob,
  presentNode,
  presentQueue,
  presentResourceQuota,
  presentWorkflow,
} from '../present.js';
import { storeJobFilterOf } from '../job-filter.js';
import { continueToken, kubeLimitOf, parseContinue } from '../list-page.js';
import { listRbac } from '../rbac-objects.js';
import { RBAC_KINDS } from '../../domain/rbac.js';
import { scanSelected, type ObjectQuery } from './selectors.js';
import { MOST_PER_PAGE, type PageKey, type PageRequest, type RowsPage } from '../../domain/list-pages.js';

function presented<T>(page: RowsPage<T>, present: (row: T) => unknown): RowsPage<KubeObject> {
  return { rows: page.rows.map((row) => present(row) as KubeObject), next: page.next };
}

export interface KubeObjects {
  list(kind: KubeKind, namespace: string | null): Promise<KubeObject[]>;
  /** Every object of the list, a chunk at a time from the store where it pages (a watch's first events). */
  chunks(kind: KubeKind, namespace: string | null): AsyncGenerator<KubeObject[]>;
  /**
   * A page of the list read from the store, when the store can read it a page at a time (Jobs,
   * Workflows, CronJobs, Queues, ResourceQuotas, Nodes): without selectors, a page; with selectors
   * the store applies (a Job's labels and phase), a page of those; with any other, the store read
   * in chunks and filtered as they come (scanSelected). Null: list them all and select in memory
   * (the RBAC kinds, which an operator writes by hand). It has no remainingItemCount (optional in
   * Kubernetes too): counting would read every row.
   */
  page(
    kind: KubeKind,
    namespace: string | null,
    query: ObjectQuery,
  ): Promise<{ items: KubeObject[]; continue?: string; remaining?: number } | null>;
  get(kind: KubeKind, namespace: string | null, name: string): Promise<KubeObject | undefined>;
}

type Source = {
  list(namespace: string | null): Promise<unknown[]>;
  get(namespace: string, name: string): Promise<unknown>;
};

export function kubeObjects(ctx: ApiContext): KubeObjects {
  const { db } = ctx;
  const byName = async (namespace: string | null, name: string, list: (ns: string | null) => Promise<unknown[]>) =>
    (await list(namespace)).find((o) => (o as KubeObject).metadata?.name === name);
  const sources: Record<string, Source> = {
    Job: {
      list: async (ns) => (await listJobs(db, ns)).map(presentJob),
      get: async (ns, name) => {
        const row = await getJob(db, ns, name);
        return row && presentJob(row);
      },
    },
    Workflow: {
      list: async (ns) => (await listWorkflows(db, ns)).map((w) => presentWorkflow(w.workflow, w.jobs)),
      get: async (ns, name) => {
        const found = await getWorkflow(db, ns, name);
        return found && presentWorkflow(found.workflow, found.jobs);
      },
    },
    CronJob: {
      list: async (ns) => (await listCronJobs(db, ns)).map(presentCronJob),
      get: async (ns, name) => {
        const row = await getCronJob(db, ns, name);
        return row && presentCronJob(row);
      },
    },
    Queue: {
      list: async (ns) => (await listQueues(db, ns)).map((row) => presentQueue(row)),
      get: async (ns, name) => {
        const row = await getQueue(db, ns, name);
        return row && presentQueue(row);
      },
    },
    ResourceQuota: {
      list: async (ns) => (await listQuotas(db, ns)).map((row) => presentResourceQuota(row)),
      get: (ns, name) =>
        byName(ns, name, async (n) => (await listQuotas(db, n)).map((row) => presentResourceQuota(row))),
    },
    Node: {
      list: async () => (await listNodes(db)).map(presentNode),
      get: (_ns, name) => byName(null, name, async () => (await listNodes(db)).map(presentNode)),
    },
  };
  for (const rbacKind of RBAC_KINDS)
    sources[rbacKind] = {
      list: (ns) => listRbac(db, rbacKind, ns),
      get: async (ns, name) => (await listRbac(db, rbacKind, ns === '' ? null : ns, name))[0],
    };
  // The kinds whose store reads a page at a time (keyset on namespace and name, as Jobs).
  const pagedSources: Record<string, (ns: string | null, page: PageRequest) => Promise<RowsPage<KubeObject>>> = {
    Job: async (ns, page) => {
      const found = await listJobPage(db, ns, {}, page.after, page.limit);
      return { rows: found.jobs.map((row) => presentJob(row) as unknown as KubeObject), next: found.next };
    },
    Workflow: async (ns, page) =>
      presented(await listWorkflowPage(db, ns, page), (w) => presentWorkflow(w.workflow, w.jobs)),
    CronJob: async (ns, page) => presented(await listCronJobPage(db, ns, page), presentCronJob),
    Queue: async (ns, page) => presented(await listQueuePage(db, ns, page), (row) => presentQueue(row)),
    ResourceQuota: async (ns, page) => presented(await listQuotaPage(db, ns, page), (row) => presentResourceQuota(row)),
    Node: async (_ns, page) => presented(await listNodePage(db, page), presentNode),
  };
  const sourceOf = (kind: KubeKind): Source => {
    const source = sources[kind.kind];
    if (!source) throw new Error(`no objects for kind ${kind.kind}`);
    return source;
  };
  return {
    list: async (kind, namespace) => (await sourceOf(kind).list(namespace)) as KubeObject[],
    chunks: async function* (kind, namespace) {
      const paged = pagedSources[kind.kind];
      if (!paged) {
        yield (await sourceOf(kind).list(namespace)) as KubeObject[];
        return;
      }
      for (let after: PageKey | null = null; ;) {
        const chunk = await paged(namespace, { after, limit: MOST_PER_PAGE });
        yield chunk.rows;
        if (chunk.next === null) return;
        after = chunk.next;
      }
    },
    page: async (kind, namespace, query) => {
      const paged = pagedSources[kind.kind];
      if (paged && !query.labelSelector && !query.fieldSelector) {
        const request = {
          limit: kubeLimitOf(query.limit),
          after: query.continue ? parseContinue(query.continue, namespace) : null,
        };
        const page = await paged(namespace, request);
        return { items: page.rows, ...(page.next ? { continue: continueToken(page.next) } : {}) };
      }
      if (!paged) return null;
      const filter = kind.kind === 'Job' ? storeJobFilterOf(query) : null;
      if (filter !== null) {
        const after = query.continue ? parseContinue(query.continue, namespace) : null;
        const page = await listJobPage(db, namespace, filter, after, kubeLimitOf(query.limit));
        return {
          items: page.jobs.map(presentJob) as unknown as KubeObject[],
          ...(page.next ? { continue: continueToken(page.next) } : {}),
        };
      }
      return scanSelected((page) => paged(namespace, page), query, namespace);
    },
    get: async (kind, namespace, name) => (await sourceOf(kind).get(namespace ?? '', name)) as KubeObject | undefined,
  };
}
