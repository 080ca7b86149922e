// Jobs for tests: a validated request for the store, and submitting and reading jobs over HTTP
// against whichever replica answers.
import { withJobDefaults, type JobRequest } from '../../src/domain/resources.js';
import { adminFetch } from './auth.js';

/** A validated 1 s job of 256 MiB, as the store takes it. */
export function jobRequest(name: string, cpuMillis = 500): JobRequest {
  return withJobDefaults({
    namespace: 'default',
    name,
    labels: {},
    spec: { resources: { cpu: `${cpuMillis}m`, memory: '256Mi' }, duration: '1s', maxAttempts: 3 },
    cpuMillis,
    memoryBytes: 256 * 1024 ** 2,
    durationMs: 1000,
    nodeSelector: {},
    maxAttempts: 3,
  });
}

export interface JobYamlOptions {
  cpu?: string;
  memory?: string;
  duration?: string;
  nodeSelector?: Record<string, string>;
  maxAttempts?: number;
  namespace?: string;
  queue?: string;
  priority?: string;
}

export function jobYaml(name: string, opts: JobYamlOptions = {}): string {
  const selector = opts.nodeSelector
    ? `  nodeSelector:\n${Object.entries(opts.nodeSelector)
        .map(([k, v]) => `    ${k}: ${v}`)
        .join('\n')}\n`
    : '';
  return `apiVersion: fencer.dev/v1
kind: Job
metadata:
  name: ${name}
${opts.namespace ? `  namespace: ${opts.namespace}\n` : ''}spec:
  resources:
    cpu: "${opts.cpu ?? '1'}"
    memory: ${opts.memory ?? '1Gi'}
  duration: ${opts.duration ?? '1s'}
${selector}${opts.maxAttempts ? `  maxAttempts: ${opts.maxAttempts}\n` : ''}${opts.queue ? `  queue: ${opts.queue}\n` : ''}${opts.priority ? `  priority: ${opts.priority}\n` : ''}`;
}

export async function anyReplica<T>(urls: string[], fn: (url: string) => Promise<T>): Promise<T> {
  let last: unknown;
  for (const url of urls) {
    try {
      return await fn(url);
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

export async function submit(urls: string[], yaml: string): Promise<number> {
  let timedOut = false;
  return anyReplica(urls, async (url) => {
    const res = await adminFetch(`${url}/api/v1/jobs`, {
      method: 'POST',
      body: yaml,
      headers: { 'content-type': 'application/yaml' },
      signal: AbortSignal.timeout(2000),
    }).catch((err: unknown) => {
      timedOut ||= (err as Error).name === 'TimeoutError';
      throw err;
    });
    if (res.status >= 500) throw new Error(`${res.status}`);
    // An attempt that timed out may have committed: the same job found again (200) is the one it made.
    return res.status === 200 && timedOut ? 201 : res.status;
  });
}
