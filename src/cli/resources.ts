// The kubectl-like resource commands: apply, get, describe, delete, cancel. Each failure
// throws, and main.ts turns it into a message on stderr and exit code 1 (DESIGN, "Exit codes").
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import YAML from 'yaml';
import type { Job, List, NodeResource, Workflow } from '../domain/resources.js';
import { ApiClient, resolveServers } from './client.js';
import { ApiError, formatDetail } from './errors/api-error.js';
import { describeJob, parseOutputFormat, renderJobs, renderNodes, type OutputFormat } from './output.js';
import { describeWorkflow, renderWorkflows } from './workflow-output.js';

const DEFAULT_NAMESPACE = 'default';

// Where each applicable kind is submitted; the server validates the rest.
const SUBMIT_PATHS: Record<string, string> = {
  Job: '/api/v1/jobs',
  Workflow: '/api/v1/workflows',
  CronJob: '/api/v1/cronjobs',
  Queue: '/api/v1/queues',
};

interface ServerOption {
  server?: string;
}
interface NamespaceOption extends ServerOption {
  namespace: string;
}
interface GetOptions extends NamespaceOption {
  allNamespaces?: boolean;
  output?: string;
  selector?: string;
  fieldSelector?: string;
  dead?: boolean;
}

export function registerResourceCommands(program: Command): void {
  program
    .command('apply')
    .description('submit the resources in a YAML file (several documents separated by ---)')
    .requiredOption('-f, --filename <file>', 'manifest file, or - for stdin')
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (opts: ServerOption & { filename: string }) => {
      await apply(clientFor(opts), opts.filename);
    });

  program
    .command('get')
    .description('list jobs, workflows or nodes, or show one')
    .argument('<type>', 'jobs|workflows|nodes (or job, workflow, node)')
    .argument('[name]', 'one object by name')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('-A, --all-namespaces', 'objects of every namespace')
    .option('-o, --output <format>', 'wide|json|yaml|name')
    .option('-l, --selector <k=v,...>', 'only jobs with these labels, e.g. fencer.dev/workflow=ci')
    .option('--field-selector <status.phase=P>', 'only jobs in this phase')
    .option('--dead', 'only dead letters (jobs out of attempts), as --field-selector status.phase=Dead')
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string | undefined, opts: GetOptions) => {
      process.stdout.write(await get(clientFor(opts), type, name, opts));
    });

  program
    .command('describe')
    .description('show one job or workflow in detail (a workflow with its stages and independent parts)')
    .argument('<type>', 'job|workflow')
    .argument('<name>')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string, opts: NamespaceOption) => {
      const kind = userKind(type);
      if (kind === 'workflow') {
        const workflow = await clientFor(opts).request<Workflow>('GET', objectPath('workflow', opts.namespace, name));
        process.stdout.write(describeWorkflow(workflow, new Date()));
        return;
      }
      const job = await clientFor(opts).request<Job>('GET', objectPath('job', opts.namespace, name));
      process.stdout.write(describeJob(job, new Date()));
    });

  program
    .command('delete')
    .description('delete a job, or a workflow with all its jobs (stopping those that run)')
    .argument('<type>', 'job|workflow')
    .argument('<name>')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string, opts: NamespaceOption) => {
      const kind = userKind(type);
      await clientFor(opts).request('DELETE', objectPath(kind, opts.namespace, name));
      process.stdout.write(`${kind}.fencer.dev "${name}" deleted\n`);
    });

  program
    .command('cancel')
    .description('cancel a job, or every unfinished job of a workflow; running ones are stopped on their nodes')
    .argument('<type>', 'job|workflow')
    .argument('<name>')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string, opts: NamespaceOption) => {
      const kind = userKind(type);
      await clientFor(opts).request('POST', `${objectPath(kind, opts.namespace, name)}/cancel`);
      process.stdout.write(`${kind}.fencer.dev "${name}" cancelled\n`);
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
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string | undefined, opts: NamespaceOption & { allDead?: boolean; selector?: string; allNamespaces?: boolean }) => {
      if (userKind(type) !== 'job') throw new Error(`only jobs are replayed, not "${type}" (a workflow is retried: fencer retry workflow NAME)`);
      if ((name === undefined) === !opts.allDead) throw new Error('name one dead job, or use --all-dead (not both)');
      const client = clientFor(opts);
      if (name !== undefined) {
        await client.request<Job>('POST', `${objectPath('job', opts.namespace, name)}/replay`);
        process.stdout.write(`job.fencer.dev "${name}" replayed\n`);
        return;
      }
      const query = new URLSearchParams();
      if (!opts.allNamespaces) query.set('namespace', opts.namespace);
      if (opts.selector) query.set('labelSelector', opts.selector);
      const replayed = await client.request<List<Job>>('POST', `/api/v1/jobs/replay?${query}`);
      for (const job of replayed.items) process.stdout.write(`job.fencer.dev "${job.metadata.name}" replayed\n`);
      if (replayed.items.length === 0) process.stderr.write('No dead jobs found.\n');
    });

  program
    .command('retry')
    .description('run a finished workflow again from its failed jobs (succeeded jobs are not run again)')
    .argument('<type>', 'workflow')
    .argument('<name>')
    .option('-n, --namespace <ns>', 'namespace', DEFAULT_NAMESPACE)
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (type: string, name: string, opts: NamespaceOption) => {
      if (userKind(type) !== 'workflow') throw new Error(`only workflows are retried, not "${type}" (a dead job is replayed: fencer replay job NAME)`);
      await clientFor(opts).request('POST', `${objectPath('workflow', opts.namespace, name)}/retry`);
      process.stdout.write(`workflow.fencer.dev "${name}" retried\n`);
    });
}

function clientFor(opts: ServerOption): ApiClient {
  return new ApiClient(resolveServers(opts.server));
}

function objectPath(kind: 'job' | 'workflow', namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/${kind}s/${encodeURIComponent(name)}`;
}

type ResourceType = 'job' | 'node' | 'workflow';

function resourceType(type: string): ResourceType {
  const t = type.toLowerCase().replace(/\.fencer\.dev$/, '');
  if (t === 'job' || t === 'jobs' || t === 'fj') return 'job';
  if (t === 'node' || t === 'nodes') return 'node';
  if (t === 'workflow' || t === 'workflows' || t === 'fwf') return 'workflow';
  throw new Error(`unknown resource type "${type}" (use jobs, workflows or nodes)`);
}

/** The kinds a user acts on (not nodes). */
function userKind(type: string): 'job' | 'workflow' {
  const kind = resourceType(type);
  if (kind === 'node') throw new Error('nodes cannot be used here: only jobs and workflows');
  return kind;
}

async function get(client: ApiClient, type: string, name: string | undefined, opts: GetOptions): Promise<string> {
  const format = parseOutputFormat(opts.output);
  const now = new Date();
  const single = name !== undefined;
  if (resourceType(type) === 'node') {
    const list = await client.request<List<NodeResource>>('GET', '/api/v1/nodes');
    const nodes = single ? list.items.filter((n) => n.metadata.name === name) : list.items;
    if (single && nodes.length === 0) throw new Error(`node.fencer.dev "${name}" not found`);
    if (nodes.length === 0 && !isDocumentFormat(format)) return nothingFound('');
    return renderNodes(nodes, { format, now, single });
  }
  const allNamespaces = Boolean(opts.allNamespaces) && !single;
  if (resourceType(type) === 'workflow') {
    const query = allNamespaces ? '' : `?namespace=${encodeURIComponent(opts.namespace)}`;
    const workflows = single
      ? [await client.request<Workflow>('GET', objectPath('workflow', opts.namespace, name))]
      : (await client.request<List<Workflow>>('GET', `/api/v1/workflows${query}`)).items;
    if (workflows.length === 0 && !isDocumentFormat(format)) return nothingFound(allNamespaces ? '' : ` in ${opts.namespace} namespace`);
    return renderWorkflows(workflows, { format, now, single, allNamespaces });
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
    jobs = (await client.request<List<Job>>('GET', `/api/v1/jobs?${query}`)).items;
  }
  if (jobs.length === 0 && !isDocumentFormat(format)) {
    return nothingFound(allNamespaces ? '' : ` in ${opts.namespace} namespace`);
  }
  return renderJobs(jobs, { format, now, single, allNamespaces });
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

async function apply(client: ApiClient, filename: string): Promise<void> {
  const source = filename === '-' ? readFileSync(0, 'utf8') : readFileSync(filename, 'utf8');
  const documents = splitManifest(source);
  if (documents.length === 0) throw new Error(`no objects passed to apply (${filename === '-' ? 'stdin' : filename})`);
  let failed = 0;
  for (const document of documents) {
    if (!(await applyDocument(client, document, documents.length > 1))) failed++;
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
async function applyDocument(client: ApiClient, document: ManifestDocument, several: boolean): Promise<boolean> {
  const kind = document.kind ?? 'Job';
  const label = `${kind.toLowerCase()}.fencer.dev/${document.name ?? '<unnamed>'}`;
  const where = several ? ` (document ${document.index}, line ${document.firstLine})` : '';
  if (document.parseError) {
    process.stderr.write(`error: ${label}${where}: invalid YAML: ${document.parseError}\n`);
    return false;
  }
  const path = SUBMIT_PATHS[kind];
  if (!path) {
    process.stderr.write(`error: ${label}${where}: kind "${kind}" cannot be applied\n`);
    return false;
  }
  try {
    const response = await client.exchange<Job>('POST', path, document.text, 'application/yaml');
    const name = response.body?.metadata?.name ?? document.name ?? '<unnamed>';
    const outcome = response.status === 201 ? 'created' : 'unchanged';
    process.stdout.write(`${kind.toLowerCase()}.fencer.dev/${name} ${outcome}\n`);
    return true;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // The server counts lines from the start of the document it got; the user reads the file.
    const lineOffset = document.firstLine - 1;
    const details = err.details.map((d) => `  ${formatDetail(d, lineOffset)}\n`).join('');
    process.stderr.write(`error: ${label}${where}: ${err.serverMessage}\n${details}`);
    return false;
  }
}
