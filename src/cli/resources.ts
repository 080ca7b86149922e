// The kubectl-like resource commands: apply, get, describe, delete, cancel. Each failure
// throws, and main.ts turns it into a message on stderr and exit code 1 (docs/architecture.md, "Contracts").
import {
  RBAC_GROUP,
  rbacPath as rbacObjectPath,
  rbacTypeOf,
  renderRbac,
  type RbacObject,
  type RbacType,
} from './rbac-output.js';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import YAML from 'yaml';
import type {
  ClusterEvent,
  CronJob,
  Job,
  JobEvent,
  List,
  NodeResource,
  Queue,
  ResourceQuota,
  Workflow,
} from '../domain/resources.js';
import type { NamespaceResource } from '../domain/namespace.js';
import { cliClient, localCa, serversFor, tokenFor } from './client.js';
import type { ApiClient, HttpMethod } from '../net/api-client.js';
import { readAllPages } from '../domain/list-pages.js';
import { ValidationError } from '../errors/validation-error.js';
import { readSubmission } from '../api/validation/submission.js';
import { readWorkflowSubmission } from '../api/validation/workflow.js';
import { readCronJobSubmission } from '../api/validation/cronjob.js';
import { readQueueSubmission, readResourceQuotaSubmission } from '../api/validation/queue.js';
import { readRbacSubmission } from '../api/validation/rbac.js';
import { workflowMaxJobs } from '../config.js';
import { ApiError, formatDetail } from '../errors/api-error.js';
import {
  describeJob,
  parseOutputFormat,
  renderClusterEvents,
  renderJobs,
  renderNodes,
  renderTopNodes,
  type OutputFormat,
  type RenderOptions,
} from './output.js';
import type { WatchedObject } from './get-watch.js';
import { describeWorkflow, renderWorkflows } from './workflow-output.js';
import {
  describeNamespace,
  describeQueue,
  describeResourceQuota,
  renderQueues,
  renderResourceQuotas,
} from './queue-output.js';
import { describeCronJob, renderCronJobs, type Occurrence } from './cronjob-output.js';

const DEFAULT_NAMESPACE = 'default';

// Where each applicable kind is submitted; the server validates the rest.
const SUBMIT_PATHS: Record<string, string> = {
  Job: '/api/v1/jobs',
  Workflow: '/api/v1/workflows',
  CronJob: '/api/v1/cronjobs',
  Queue: '/api/v1/queues',
  ResourceQuota: '/api/v1/resourcequotas',
};

// The RBAC kinds, applied as kubectl apply --server-side does (created or changed), under their
// Kubernetes path: rbac.fencer.dev/v1 has no /api/v1 route.
const RBAC_KIND_PLURALS: Record<string, string> = {
  Role: 'roles',
  ClusterRole: 'clusterroles',
  RoleBinding: 'rolebindings',
  ClusterRoleBinding: 'clusterrolebindings',
};

// Kinds a user changes by applying them again (the others are immutable: the same again is unchanged).
const MUTABLE_KINDS = new Set(['Queue', 'ResourceQuota', 'CronJob', ...Object.keys(RBAC_KIND_PLURALS)]);

interface ServerOption {
  server?: string;
}
interface NamespaceOption extends ServerOption {
  namespace: string;
}
interface DryRunOption {
  /** A bare --dry-run is client, as kubectl once took it. */
  dryRun?: string | true;
}

/**
 * kubectl's --dry-run: server sends the request with dryRun=All (checked as a real one, nothing
 * changed); client checks it here with the server's own validation and sends no write at all.
 */
type DryRun = 'none' | 'server' | 'client';

const DRY_RUN_HELP = 'server: the server checks it and changes nothing; client: checked here, nothing sent';

function dryRunOf(opts: DryRunOption): DryRun {
  const value = opts.dryRun === true ? 'client' : (opts.dryRun ?? 'none');
  if (value !== 'none' && value !== 'server' && value !== 'client')
    throw new Error(`--dry-run must be "none", "server" or "client", not "${value}"`);
  return value;
}

/** What kubectl appends to the line of a dry run. */
function dryRunSuffix(dryRun: DryRun): string {
  return dryRun === 'server' ? ' (server dry run)' : dryRun === 'client' ? ' (dry run)' : '';
}

/** A write to `path` (which may have a query already), or its dry run; client dry runs read the object instead, so it must exist. */
async function writeUnlessDry<T>(
  client: ApiClient,
  dryRun: DryRun,
  method: HttpMethod,
  path: string,
  objectPath: string,
): Promise<T | undefined> {
  if (dryRun === 'client') {
    await client.request('GET', objectPath);
    return undefined;
  }
  return client.request<T>(method, dryRun === 'server' ? `${path}${path.includes('?') ? '&' : '?'}dryRun=All` : path);
}

// A client dry run checks a document with what the server would check it with, before storing.
const LOCAL_CHECKS: Record<string, (text: string) => unknown> = {
  Job: (text) => readSubmission(text, 'application/yaml'),
  Workflow: (text) => readWorkflowSubmission(text, 'application/yaml', workflowMaxJobs()),
  CronJob: (text) => readCronJobSubmission(text, 'application/yaml'),
  Queue: (text) => readQueueSubmission(text, 'application/yaml'),
  ResourceQuota: (text) => readResourceQuotaSubmission(text, 'application/yaml'),
  ...Object.fromEntries(
    Object.keys(RBAC_KIND_PLURALS).map((kind) => [
      kind,
      (text: string) => readRbacSubmission(text, 'application/yaml'),
    ]),
  ),
};

/** Where an RBAC document is applied: its object's own path (server-side apply creates or changes it). */
function rbacPath(document: ManifestDocument, plural: string): string {
  const metadata = ((YAML.parse(document.text) ?? {}) as { metadata?: { namespace?: unknown } }).metadata ?? {};
  const namespaced = plural === 'roles' || plural === 'rolebindings';
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : DEFAULT_NAMESPACE;
  return `/apis/rbac.fencer.dev/v1${namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${plural}/${encodeURIComponent(document.name ?? '')}`;
}
interface GetOptions extends NamespaceOption {
  allNamespaces?: boolean;
  watch?: boolean;
  output?: string;
  selector?: string;
  fieldSelector?: string;
  dead?: boolean;
}

export function registerResourceCommands(program: Command): void {
  program
    .command('kubeconfig')
    .description(
      'write a kubeconfig for this cluster (a context per replica, current: fencer), so kubectl and client libraries need no --server',
    )
    .option('--server <urls>', 'replica URLs, comma-separated')
    .option('-o, --output <file>', 'write it here (default: print it)')
    .option(
      '--certificate-authority <file>',
      "the CA the replicas' certificate is verified against (default: $FENCER_CA, else the local cluster's); the servers are then https, which kubectl needs to send the token",
    )
    .action(async (opts: ServerOption & { output?: string; certificateAuthority?: string }) => {
      const { kubeconfigFor, writeKubeconfig } = await import('./kubeconfig.js');
      const servers = await serversFor(opts.server);
      // The CLI's own token (FENCER_TOKEN, kubectl's kubeconfig, the local cluster's admin token).
      const caFile = opts.certificateAuthority ?? (process.env.FENCER_CA || localCa());
      const user = {
        token: tokenFor(),
        ...(caFile ? { certificateAuthority: readFileSync(caFile, 'utf8') } : {}),
      };
      if (opts.output) {
        writeKubeconfig(opts.output, servers, user);
        process.stdout.write(
          `wrote ${opts.output}: context fencer on ${servers[0]} (${servers.length} replicas); try KUBECONFIG=${opts.output} kubectl get fj\n`,
        );
      } else {
        process.stdout.write(`${kubeconfigFor(servers, user)}\n`);
      }
    });

  program
    .command('apply')
    .description('submit the resources in a YAML file (several documents separated by ---)')
    .requiredOption('-f, --filename <file>', 'manifest file, or - for stdin')
    .option('--dry-run [strategy]', DRY_RUN_HELP)
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (opts: ServerOption & DryRunOption & { filename: string }) => {
      const dryRun = dryRunOf(opts);
      await apply(dryRun === 'client' ? undefined : await clientFor(opts), opts.filename, dryRun);
    });

  program
    .command('get')
    .description('list jobs, workflows, cronjobs, queues, resourcequotas, nodes or RBAC objects, or show one')
    .argument(
      '<type>',
      'jobs|workflows|cronjobs|queues|resourcequotas|nodes|roles|clusterroles|rolebindings|clusterrolebindings (or the singular)',
    )
    .argument('[name]', 'one object by name')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('-A, --all-namespaces', 'objects of every namespace')
    .option('-o, --output <format>', 'wide|json|yaml|name')
    .option('-l, --selector <k=v,...>', 'only jobs with these labels, e.g. fencer.dev/workflow=ci')
    .option('--field-selector <status.phase=P>', 'only jobs in this phase')
    .option('--dead', 'only dead letters (jobs out of attempts), as --field-selector status.phase=Dead')
    .option('-w, --watch', "after the list, a row for every change, until Ctrl-C (goes on through a replica's death)")
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string | undefined, opts: GetOptions) => {
      const rbac = rbacTypeOf(type);
      if (rbac && opts.watch) throw new Error(`-w: ${rbac.plural} are not watched by fencer get (kubectl get -w is)`);
      if (rbac) return void process.stdout.write(await getRbac(await clientFor(opts), rbac, name, opts));
      if (opts.watch) return watch(await clientFor(opts), type, name, opts);
      process.stdout.write(await get(await clientFor(opts), type, name, opts));
    });

  program
    .command('top')
    .description(
      "what each node's jobs hold against its capacity (allocated, not measured: a simulated node holds what its jobs ask)",
    )
    .argument('<type>', 'nodes')
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, opts: ServerOption) => {
      if (resourceType(type) !== 'node') throw new Error(`top: "${type}" is not served (only nodes)`);
      const nodes = await allNodes(await clientFor(opts));
      process.stdout.write(nodes.length === 0 ? nothingFound('') : renderTopNodes(nodes));
    });

  program
    .command('describe')
    .description(
      'show one object in detail: a workflow with its stages and independent parts; a cronjob with its recent ' +
        'occurrences and how late each fired and started; a queue, a resourcequota or a namespace with what it uses ' +
        'against its limits and what has waited longest',
    )
    .argument('<type>', 'job|workflow|cronjob|queue|resourcequota|namespace')
    .argument('<name>', 'its name (for a namespace, the namespace)')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string, opts: NamespaceOption) => {
      process.stdout.write(await describe(await clientFor(opts), type, name, opts.namespace));
    });

  program
    .command('delete')
    .description(
      'delete a job, a workflow or a cronjob with all its jobs (stopping those that run), a queue none of whose jobs is unfinished, a resourcequota, or an RBAC object',
    )
    .argument('<type>', 'job|workflow|cronjob|queue|resourcequota|role|clusterrole|rolebinding|clusterrolebinding')
    .argument('<name>')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('--dry-run [strategy]', DRY_RUN_HELP)
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string, opts: NamespaceOption & DryRunOption) => {
      const dryRun = dryRunOf(opts);
      const rbac = rbacTypeOf(type);
      if (rbac) {
        const path = rbacObjectPath(rbac, opts.namespace, name);
        await writeUnlessDry(await clientFor(opts), dryRun, 'DELETE', path, path);
        process.stdout.write(`${rbac.kind.toLowerCase()}.${RBAC_GROUP} "${name}" deleted${dryRunSuffix(dryRun)}\n`);
        return;
      }
      const kind = kindOf(type, ['job', 'workflow', 'cronjob', 'queue', 'resourcequota'], 'delete');
      const path = objectPath(kind, opts.namespace, name);
      await writeUnlessDry(await clientFor(opts), dryRun, 'DELETE', path, path);
      process.stdout.write(`${kind}.fencer.dev "${name}" deleted${dryRunSuffix(dryRun)}\n`);
    });

  program
    .command('cancel')
    .description('cancel a job, or every unfinished job of a workflow; running ones are stopped on their nodes')
    .argument('<type>', 'job|workflow')
    .argument('<name>')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('--dry-run [strategy]', DRY_RUN_HELP)
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string, opts: NamespaceOption & DryRunOption) => {
      const kind = kindOf(type, ['job', 'workflow'], 'cancel');
      const dryRun = dryRunOf(opts);
      const path = objectPath(kind, opts.namespace, name);
      await writeUnlessDry(await clientFor(opts), dryRun, 'POST', `${path}/cancel`, path);
      process.stdout.write(`${kind}.fencer.dev "${name}" cancelled${dryRunSuffix(dryRun)}\n`);
    });

  program
    .command('replay')
    .description('put dead letters (jobs out of attempts) back to Pending with fresh attempts')
    .argument('<type>', 'job')
    .argument('[name]', 'one dead job; or --all-dead')
    .option('--all-dead', 'every dead job of the namespace (with -l, those with these labels)')
    .option('-l, --selector <k=v,...>', 'with --all-dead: only jobs with these labels')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('-A, --all-namespaces', 'with --all-dead: every namespace')
    .option('--dry-run <strategy>', 'server: the server checks it and changes nothing')
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(
      async (
        type: string,
        name: string | undefined,
        opts: NamespaceOption & DryRunOption & { allDead?: boolean; selector?: string; allNamespaces?: boolean },
      ) => {
        if (resourceType(type) !== 'job')
          throw new Error(`only jobs are replayed, not "${type}" (a workflow is retried: fencer retry workflow NAME)`);
        if ((name === undefined) === !opts.allDead) throw new Error('name one dead job, or use --all-dead (not both)');
        const dryRun = dryRunOf(opts);
        if (dryRun === 'client')
          throw new Error('replay: --dry-run=client cannot tell which jobs are dead; use --dry-run=server');
        const client = await clientFor(opts);
        const query = new URLSearchParams();
        if (dryRun === 'server') query.set('dryRun', 'All');
        if (name !== undefined) {
          await client.request<Job>('POST', `${objectPath('job', opts.namespace, name)}/replay?${query}`);
          process.stdout.write(`job.fencer.dev "${name}" replayed${dryRunSuffix(dryRun)}\n`);
          return;
        }
        if (!opts.allNamespaces) query.set('namespace', opts.namespace);
        if (opts.selector) query.set('labelSelector', opts.selector);
        const replayed = await client.request<List<Job>>('POST', `/api/v1/jobs/replay?${query}`);
        for (const job of replayed.items)
          process.stdout.write(`job.fencer.dev "${job.metadata.name}" replayed${dryRunSuffix(dryRun)}\n`);
        if (replayed.items.length === 0) process.stderr.write('No dead jobs found.\n');
      },
    );

  program
    .command('retry')
    .description('run a finished workflow again from its failed jobs (succeeded jobs are not run again)')
    .argument('<type>', 'workflow')
    .argument('<name>')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('--dry-run <strategy>', 'server: the server checks it and changes nothing')
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string, opts: NamespaceOption & DryRunOption) => {
      if (resourceType(type) !== 'workflow')
        throw new Error(`only workflows are retried, not "${type}" (a dead job is replayed: fencer replay job NAME)`);
      const dryRun = dryRunOf(opts);
      if (dryRun === 'client')
        throw new Error('retry: --dry-run=client cannot tell what would run again; use --dry-run=server');
      const path = objectPath('workflow', opts.namespace, name);
      await writeUnlessDry(await clientFor(opts), dryRun, 'POST', `${path}/retry`, path);
      process.stdout.write(`workflow.fencer.dev "${name}" retried${dryRunSuffix(dryRun)}\n`);
    });
}

async function clientFor(opts: ServerOption): Promise<ApiClient> {
  return cliClient(await serversFor(opts.server));
}

/** The kinds that live in a namespace, by the singular of their API path. */
type NamespacedType = 'job' | 'workflow' | 'cronjob' | 'queue' | 'resourcequota';

function objectPath(kind: NamespacedType, namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/${kind}s/${encodeURIComponent(name)}`;
}

type ResourceType = NamespacedType | 'node' | 'namespace' | 'event';

// What a user may call each type: kubectl's singular, plural and short names (the CRDs' shortNames).
const TYPE_NAMES: Record<ResourceType, readonly string[]> = {
  job: ['job', 'jobs', 'fj'],
  workflow: ['workflow', 'workflows', 'fwf'],
  cronjob: ['cronjob', 'cronjobs', 'fcj', 'cj'],
  queue: ['queue', 'queues', 'fq'],
  resourcequota: ['resourcequota', 'resourcequotas', 'frq', 'quota'],
  node: ['node', 'nodes'],
  namespace: ['namespace', 'namespaces', 'ns'],
  event: ['event', 'events', 'ev'],
};

function resourceType(type: string): ResourceType {
  const t = type.toLowerCase().replace(/\.fencer\.dev$/, '');
  const found = (Object.keys(TYPE_NAMES) as ResourceType[]).find((kind) => TYPE_NAMES[kind].includes(t));
  if (!found)
    throw new Error(
      `unknown resource type "${type}" (use jobs, workflows, cronjobs, queues, resourcequotas, nodes, namespaces, events, roles, clusterroles, rolebindings or clusterrolebindings)`,
    );
  return found;
}

/** The type, if it is one of those `fencer <command>` acts on. */
function kindOf<K extends ResourceType>(type: string, allowed: readonly K[], command: string): K {
  const kind = resourceType(type);
  if (!(allowed as readonly ResourceType[]).includes(kind)) {
    throw new Error(
      `fencer ${command} does not act on ${TYPE_NAMES[kind][1]} (only on ${allowed.map((k) => TYPE_NAMES[k][1]).join(', ')})`,
    );
  }
  return kind as K;
}

async function describe(client: ApiClient, type: string, name: string, namespace: string): Promise<string> {
  const kind = kindOf(type, ['job', 'workflow', 'cronjob', 'queue', 'resourcequota', 'namespace'], 'describe');
  const now = new Date();
  switch (kind) {
    case 'namespace':
      return describeNamespace(
        await client.request<NamespaceResource>('GET', `/api/v1/namespaces/${encodeURIComponent(name)}`),
        now,
      );
    case 'workflow':
      return describeWorkflow(await client.request<Workflow>('GET', objectPath(kind, namespace, name)), now);
    case 'cronjob': {
      const path = objectPath(kind, namespace, name);
      const cronJob = await client.request<CronJob>('GET', path);
      const occurrences = await client.request<{ items: Occurrence[] }>('GET', `${path}/occurrences`);
      return describeCronJob(cronJob, occurrences.items, now);
    }
    case 'queue':
      return describeQueue(await client.request<Queue>('GET', objectPath(kind, namespace, name)), now);
    case 'resourcequota':
      return describeResourceQuota(await client.request<ResourceQuota>('GET', objectPath(kind, namespace, name)), now);
    case 'job': {
      const path = objectPath(kind, namespace, name);
      const job = await client.request<Job>('GET', path);
      return describeJob(job, now, (await client.request<{ items: JobEvent[] }>('GET', `${path}/events`)).items);
    }
  }
}

async function get(client: ApiClient, type: string, name: string | undefined, opts: GetOptions): Promise<string> {
  const format = parseOutputFormat(opts.output);
  const now = new Date();
  const single = name !== undefined;
  if (resourceType(type) === 'node') {
    const all = await allNodes(client);
    const nodes = single ? all.filter((n) => n.metadata.name === name) : all;
    if (single && nodes.length === 0) throw new Error(`node.fencer.dev "${name}" not found`);
    if (nodes.length === 0 && !isDocumentFormat(format)) return nothingFound('');
    return renderNodes(nodes, { format, now, single });
  }
  if (resourceType(type) === 'namespace')
    throw new Error('namespaces are not listed: fencer describe namespace NAME shows one');
  if (resourceType(type) === 'event') {
    if (single) throw new Error('events are listed, not named: fencer get events');
    const events = (await client.request<List<ClusterEvent>>('GET', '/api/v1/clusterevents')).items;
    if (events.length === 0 && !isDocumentFormat(format)) return nothingFound('');
    return renderClusterEvents(events, { format, now });
  }
  const kind = kindOf(type, ['job', 'workflow', 'cronjob', 'queue', 'resourcequota'], 'get');
  const allNamespaces = Boolean(opts.allNamespaces) && !single;
  const options: RenderOptions = { format, now, single, allNamespaces };
  const where = allNamespaces ? '' : ` in ${opts.namespace} namespace`;
  if (kind !== 'job') {
    const items = await objects(client, kind, name, opts.namespace, allNamespaces);
    if (items.length === 0 && !isDocumentFormat(format)) return nothingFound(where);
    if (kind === 'queue') return renderQueues(items as Queue[], options);
    if (kind === 'resourcequota') return renderResourceQuotas(items as ResourceQuota[], options);
    if (kind === 'cronjob') return renderCronJobs(items as CronJob[], options);
    return renderWorkflows(items as Workflow[], options);
  }
  let jobs: Job[];
  if (single) {
    jobs = [await client.request<Job>('GET', objectPath('job', opts.namespace, name))];
  } else {
    const query = new URLSearchParams();
    if (!allNamespaces) query.set('namespace', opts.namespace);
    if (opts.selector) query.set('labelSelector', opts.selector);
    const fieldSelector = opts.dead ? 'status.phase=Dead' : opts.fieldSelector;
    if (fieldSelector) query.set('fieldSelector', fieldSelector);
    jobs = await readAllPages(`/api/v1/jobs?${query}`, (path) => client.request<List<Job>>('GET', path));
  }
  if (jobs.length === 0 && !isDocumentFormat(format)) return nothingFound(where);
  return renderJobs(jobs, options);
}

async function watch(client: ApiClient, type: string, name: string | undefined, opts: GetOptions): Promise<void> {
  if (parseOutputFormat(opts.output) !== 'table' && parseOutputFormat(opts.output) !== 'wide')
    throw new Error('-w prints tables: -o wide or none');
  const kind =
    resourceType(type) === 'node'
      ? 'node'
      : kindOf(type, ['job', 'workflow', 'cronjob', 'queue', 'resourcequota'], 'get');
  const allNamespaces = Boolean(opts.allNamespaces) && name === undefined;
  const render = (items: WatchedObject[]) => {
    const options: RenderOptions = {
      format: parseOutputFormat(opts.output),
      now: new Date(),
      single: false,
      allNamespaces,
    };
    switch (kind) {
      case 'node':
        return renderNodes(items as unknown as NodeResource[], options);
      case 'job':
        return renderJobs(items as unknown as Job[], options);
      case 'queue':
        return renderQueues(items as unknown as Queue[], options);
      case 'resourcequota':
        return renderResourceQuotas(items as unknown as ResourceQuota[], options);
      case 'cronjob':
        return renderCronJobs(items as unknown as CronJob[], options);
      default:
        return renderWorkflows(items as unknown as Workflow[], options);
    }
  };
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  let headed = false; // an empty list prints nothing: the first change then prints the header
  const { watchObjects } = await import('./get-watch.js');
  await watchObjects(
    client,
    {
      kind,
      namespace: kind === 'node' || allNamespaces ? null : opts.namespace,
      name,
      labelSelector: opts.selector,
      fieldSelector: opts.dead ? 'status.phase=Dead' : opts.fieldSelector,
    },
    {
      table: (items) => {
        if (items.length === 0) return '';
        headed = true;
        return render(items);
      },
      // The changed object's row laid out among the others, so its columns line up with the list's.
      row: (changed, seen) => {
        const others = seen.filter(
          (o) => o.metadata.name !== changed.metadata.name || o.metadata.namespace !== changed.metadata.namespace,
        );
        const lines = render([...others, changed])
          .trimEnd()
          .split('\n');
        const shown = headed ? `${lines.at(-1)}\n` : `${lines[0]}\n${lines.at(-1)}\n`;
        headed = true;
        return shown;
      },
    },
    (text) => process.stdout.write(text),
    stop.signal,
  );
}

/** Roles, ClusterRoles and their bindings, through their Kubernetes path (they have no /api/v1 route). */
async function getRbac(client: ApiClient, type: RbacType, name: string | undefined, opts: GetOptions): Promise<string> {
  const format = parseOutputFormat(opts.output);
  const single = name !== undefined;
  const allNamespaces = Boolean(opts.allNamespaces) && !single && type.namespaced;
  const items = single
    ? [await client.request<RbacObject>('GET', rbacObjectPath(type, opts.namespace, name))]
    : await readAllPages(rbacObjectPath(type, allNamespaces ? undefined : opts.namespace), (path) =>
        client.request<List<RbacObject>>('GET', path),
      );
  const where = type.namespaced && !allNamespaces ? ` in ${opts.namespace} namespace` : '';
  if (items.length === 0 && !isDocumentFormat(format)) return nothingFound(where);
  return renderRbac(items, type, { format, now: new Date(), single, allNamespaces });
}

/** One object by name, or the list of a namespace (of all with allNamespaces). */
async function objects(
  client: ApiClient,
  kind: Exclude<NamespacedType, 'job'>,
  name: string | undefined,
  namespace: string,
  allNamespaces: boolean,
) {
  if (name !== undefined)
    return [await client.request<Workflow | CronJob | Queue | ResourceQuota>('GET', objectPath(kind, namespace, name))];
  const query = allNamespaces ? '' : `?namespace=${encodeURIComponent(namespace)}`;
  return readAllPages(`/api/v1/${kind}s${query}`, (path) =>
    client.request<List<Workflow | CronJob | Queue | ResourceQuota>>('GET', path),
  );
}

/** Every node, a page at a time. */
function allNodes(client: ApiClient): Promise<NodeResource[]> {
  return readAllPages('/api/v1/nodes', (path) => client.request<List<NodeResource>>('GET', path));
}

function isDocumentFormat(format: OutputFormat): boolean {
  return format === 'json' || format === 'yaml';
}

// An empty table would be a lone header: kubectl says so on stderr and keeps stdout empty. An
// empty list in json/yaml is still printed, since it is a document a script can parse.
function nothingFound(where: string): string {
  process.stderr.write(`No resources found${where}.\n`);
  return '';
}

/** One document of a manifest, cut out of the file as written so line numbers still mean something. */
interface ManifestDocument {
  index: number;
  text: string;
  firstLine: number;
  kind?: string;
  name?: string;
  parseError?: string;
}

async function apply(client: ApiClient | undefined, filename: string, dryRun: DryRun): Promise<void> {
  const source = filename === '-' ? readFileSync(0, 'utf8') : readFileSync(filename, 'utf8');
  const documents = splitManifest(source);
  if (documents.length === 0) throw new Error(`no objects passed to apply (${filename === '-' ? 'stdin' : filename})`);
  let failed = 0;
  for (const document of documents) {
    if (!(await applyDocument(client, document, documents.length > 1, dryRun))) failed++;
  }
  if (failed > 0) throw new Error(`${failed} of ${documents.length} document(s) not applied`);
}

export function splitManifest(source: string): ManifestDocument[] {
  const documents: ManifestDocument[] = [];
  for (const doc of YAML.parseAllDocuments(source)) {
    const range = doc.contents?.range;
    const parseError = doc.errors[0]?.message;
    const value: unknown = parseError ? undefined : doc.toJS();
    if (!parseError && (value === null || value === undefined)) continue; // a stray `---`, or only comments
    // Start at the beginning of the line holding the content so an inline `--- {…}` still parses.
    const start = range ? source.lastIndexOf('\n', range[0] - 1) + 1 : 0;
    const object = (typeof value === 'object' && value !== null ? value : {}) as {
      kind?: unknown;
      metadata?: { name?: unknown };
    };
    documents.push({
      index: documents.length + 1,
      text: range ? source.slice(start, range[2]) : '',
      firstLine: source.slice(0, start).split('\n').length,
      kind: typeof object.kind === 'string' ? object.kind : undefined,
      name: typeof object.metadata?.name === 'string' ? object.metadata.name : undefined,
      parseError,
    });
  }
  return documents;
}

/** Returns whether the document was accepted; refusals are reported here, unreachability is thrown. */
async function applyDocument(
  client: ApiClient | undefined,
  document: ManifestDocument,
  several: boolean,
  dryRun: DryRun,
): Promise<boolean> {
  const kind = document.kind ?? 'Job';
  const rbacPlural = RBAC_KIND_PLURALS[kind];
  const group = rbacPlural ? 'rbac.fencer.dev' : 'fencer.dev';
  const label = `${kind.toLowerCase()}.${group}/${document.name ?? '<unnamed>'}`;
  const where = several ? ` (document ${document.index}, line ${document.firstLine})` : '';
  if (document.parseError) {
    process.stderr.write(`error: ${label}${where}: invalid YAML: ${document.parseError}\n`);
    return false;
  }
  const path = rbacPlural ? (document.name ? rbacPath(document, rbacPlural) : undefined) : SUBMIT_PATHS[kind];
  if (!path) {
    process.stderr.write(`error: ${label}${where}: kind "${kind}" cannot be applied\n`);
    return false;
  }
  try {
    if (!client) {
      LOCAL_CHECKS[kind]!(document.text);
      process.stdout.write(`${label} created${dryRunSuffix(dryRun)}\n`);
      return true;
    }
    // One key per document, kept across the client's resends after a 429: a generated name is made once.
    const response = await client.exchange<Job>(
      rbacPlural ? 'PATCH' : 'POST',
      dryRun === 'server' ? `${path}?dryRun=All` : path,
      document.text,
      rbacPlural ? 'application/apply-patch+yaml' : 'application/yaml',
      { 'idempotency-key': randomUUID() },
    );
    const name = response.body?.metadata?.name ?? document.name ?? '<unnamed>';
    // A 200 of a mutable kind may be a change or the same again: the server does not say which.
    const outcome = response.status === 201 ? 'created' : MUTABLE_KINDS.has(kind) ? 'configured' : 'unchanged';
    process.stdout.write(`${kind.toLowerCase()}.${group}/${name} ${outcome}${dryRunSuffix(dryRun)}\n`);
    return true;
  } catch (err) {
    if (err instanceof ValidationError) {
      const details = err.details.map((d) => `  ${formatDetail(d, document.firstLine - 1)}\n`).join('');
      process.stderr.write(`error: ${label}${where}: the ${kind} is not valid\n${details}`);
      return false;
    }
    if (!(err instanceof ApiError)) throw err;
    // The server counts lines from the start of the document it got; the user reads the file.
    const lineOffset = document.firstLine - 1;
    const details = err.details.map((d) => `  ${formatDetail(d, lineOffset)}\n`).join('');
    process.stderr.write(`error: ${label}${where}: ${err.serverMessage}\n${details}`);
    return false;
  }
}
