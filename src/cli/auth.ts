// `fencer auth can-i VERB RESOURCE [NAME]`: whether the CLI's token may (a SelfSubjectAccessReview
// the replica answers from its policy, as `kubectl auth can-i` asks), printed yes or no, exit 0 or
// 1 as kubectl's. RESOURCE is a plural (jobs, jobs/cancel), with its group when not fencer's
// (roles.rbac.fencer.dev, events), or a path (/metrics) for a non-resource request.
import type { Command } from 'commander';
import { FENCER_RESOURCES } from '../auth/rbac/builtin.js';
import { cliClient, serversFor } from './client.js';

interface CanIOptions {
  namespace: string;
  allNamespaces?: boolean;
  server?: string;
}

export function registerAuthCommands(program: Command): void {
  const auth = program.command('auth').description('what your token may do');
  auth
    .command('can-i')
    .description('whether you may VERB RESOURCE [NAME] (yes, exit 0; no, exit 1)')
    .argument('<verb>', 'get, list, watch, create, update, patch, delete, or *')
    .argument('<resource>', 'jobs, jobs/cancel, roles.rbac.fencer.dev, ... or a path such as /metrics')
    .argument('[name]', 'one object')
    .option('-n, --namespace <ns>', 'the namespace', 'default')
    .option('-A, --all-namespaces', 'in every namespace (the cluster scope)')
    .option('--server <urls>', 'replica URLs, comma-separated')
    .action(async (verb: string, resource: string, name: string | undefined, opts: CanIOptions) => {
      const client = cliClient(await serversFor(opts.server));
      const spec = resource.startsWith('/')
        ? { nonResourceAttributes: { verb, path: resource } }
        : {
            resourceAttributes: {
              verb,
              ...resourceOf(resource),
              ...(name ? { name } : {}),
              ...scopeOf(resource, opts),
            },
          };
      const review = await client.request<{ status: { allowed: boolean } }>(
        'POST',
        '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec },
      );
      process.stdout.write(review.status.allowed ? 'yes\n' : 'no\n');
      process.exitCode = review.status.allowed ? 0 : 1;
    });
}

/** plural[/subresource][.group] into a review's group, resource and subresource. */
function resourceOf(text: string): { group: string; resource: string; subresource?: string } {
  const [typed, subresource] = text.split('/') as [string, string | undefined];
  const dot = typed.indexOf('.');
  const plural = dot < 0 ? typed : typed.slice(0, dot);
  const known = FENCER_RESOURCES[plural];
  const group = dot < 0 ? (known?.group ?? '') : typed.slice(dot + 1);
  return { group, resource: plural, ...(subresource ? { subresource } : {}) };
}

function scopeOf(resource: string, opts: CanIOptions): { namespace?: string } {
  const known = FENCER_RESOURCES[resource.split(/[./]/)[0]!];
  if (opts.allNamespaces || known?.namespaced === false) return {};
  return { namespace: opts.namespace };
}
