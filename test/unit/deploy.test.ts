// deploy/: what the Kubernetes schemas cannot see (scripts/validate-deploy.sh checks those). The
// overlays are rendered with `kubectl kustomize` and read as a cluster would: the CLI flags each
// pod passes are fencer's (its commander definitions parse them), every $(VAR) is defined, the
// Services, the PodDisruptionBudget and the ServiceMonitor select the pods they mean, the agents
// list every replica, the CRDs are crds/ unchanged, the timings are the code's. Without kubectl
// the rendered checks skip and say so; the files are still compared.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { DEFAULT_TIMINGS, timingsFromEnv, timingsToEnv } from '../../src/config.js';
import { registerAgentCommand } from '../../src/cli/agent.js';
import { registerReplicaCommand } from '../../src/cli/replica.js';
import { parseCpu, parseMemory } from '../../src/domain/quantity.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const FENCER_ENTRY = ['node', '/app/dist/cli/main.js'];
const CP = { 'app.kubernetes.io/name': 'fencer', 'app.kubernetes.io/component': 'control-plane' };

const kubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!kubectl) console.warn('deploy.test: kubectl is not on PATH: the rendered manifests are not checked (skipped)');

/** What to render: an overlay, plus the components a user would add to it. */
const RENDERS: Record<string, { overlay: string; components: string[] }> = {
  'with-postgres': { overlay: 'overlays/with-postgres', components: [] },
  'external-postgres': { overlay: 'overlays/external-postgres', components: [] },
  'with-patroni': { overlay: 'overlays/with-patroni', components: [] },
  'with-postgres+prometheus-operator': {
    overlay: 'overlays/with-postgres',
    components: ['components/prometheus-operator'],
  },
  'with-postgres+cert-manager': { overlay: 'overlays/with-postgres', components: ['components/cert-manager'] },
};

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const rendered = new Map<string, any[]>();
function render(name: string): any[] {
  const known = rendered.get(name);
  if (known) return known;
  const { overlay, components } = RENDERS[name]!;
  let dir = join(DEPLOY, overlay);
  if (components.length > 0) {
    dir = mkdtempSync(join(tmpdir(), 'deploy-test-'));
    scratch.push(dir);
    const rel = (path: string) => relative(dir, join(DEPLOY, path));
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        `  - ${rel(overlay)}`,
        'components:',
        ...components.map((c) => `  - ${rel(c)}`),
        '',
      ].join('\n'),
    );
  }
  const text = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  const objects = parseAllDocuments(text)
    .map((doc) => doc.toJS())
    .filter((o) => o);
  rendered.set(name, objects);
  return objects;
}

function find(objects: any[], kind: string, name: string): any {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} in the render`);
  return found;
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);
const workloads = (objects: any[]): any[] => objects.filter((o) => WORKLOADS.has(o.kind));
const allContainers = (w: any): any[] => [
  ...(w.spec.template.spec.initContainers ?? []),
  ...w.spec.template.spec.containers,
];
const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
const podsSelectedBy = (objects: any[], selector: Record<string, string>) =>
  workloads(objects).filter((w) => selects(selector, w.spec.template.metadata.labels));

/** The container's environment as the kubelet builds it: env, and the data of envFrom ConfigMaps. */
function environment(objects: any[], container: any, fieldValues: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    expect(from.configMapRef, 'envFrom reads ConfigMaps only').toBeDefined();
    Object.assign(env, find(objects, 'ConfigMap', from.configMapRef.name).data);
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef)
      env[e.name] = fieldValues[e.valueFrom.fieldRef.fieldPath] ?? `<${e.valueFrom.fieldRef.fieldPath}>`;
    else env[e.name] = `<secret ${e.valueFrom?.secretKeyRef?.name}/${e.valueFrom?.secretKeyRef?.key}>`;
  }
  return env;
}

/** $(VAR) expanded as the kubelet does; an undefined one fails the test. */
function expand(value: string, env: Record<string, string>): string {
  return value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (_, name: string) => {
    expect(env, `$(${name}) is defined`).toHaveProperty(name);
    return env[name]!;
  });
}

/** Parses fencer's argv with its real command definition, the action replaced by a capture. */
async function parseFencer(
  register: (program: Command) => void,
  argv: string[],
): Promise<{ opts: any; command: Command }> {
  const program = new Command().exitOverride();
  register(program);
  const command = program.commands[0]!.exitOverride();
  let opts: any;
  command.action((o: unknown) => {
    opts = o;
  });
  await program.parseAsync(argv, { from: 'user' });
  return { opts, command };
}

function envFile(path: string): Record<string, string> {
  const entries = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
  return Object.fromEntries(entries);
}

describe('deploy/ files', () => {
  it('holds byte-for-byte copies of crds/*.yaml, each listed in its kustomization', () => {
    const crds = readdirSync(join(ROOT, 'crds'))
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    const copies = readdirSync(join(DEPLOY, 'crds'))
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .sort();
    expect(copies).toEqual(crds);
    for (const file of crds) {
      expect(
        readFileSync(join(DEPLOY, 'crds', file), 'utf8'),
        `deploy/crds/${file} (bash scripts/validate-deploy.sh --sync-crds)`,
      ).toBe(readFileSync(join(ROOT, 'crds', file), 'utf8'));
    }
    expect(parse(readFileSync(join(DEPLOY, 'crds', 'kustomization.yaml'), 'utf8')).resources).toEqual(crds);
  });

  it('writes out the timings of the code, and fencer accepts them', () => {
    const timings = envFile(join(DEPLOY, 'base', 'timings.env'));
    expect(timings).toEqual(timingsToEnv(DEFAULT_TIMINGS));
    expect(timingsFromEnv(timings)).toEqual(DEFAULT_TIMINGS);
  });
});

describe.skipIf(!kubectl).each(Object.keys(RENDERS))('the render of %s', (name) => {
  it("needs no Kubernetes permissions (but Patroni's, on ConfigMaps and pods) and keeps every namespaced object in namespace fencer", () => {
    const objects = render(name);
    const permissions = objects.filter((o) => /Role|RoleBinding|ServiceAccount/.test(o.kind));
    const patroni = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('fencer-patroni'));
    expect(permissions.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      patroni ? ['Role/fencer-postgres', 'RoleBinding/fencer-postgres', 'ServiceAccount/fencer-postgres'] : [],
    );
    if (patroni) {
      const role = find(objects, 'Role', 'fencer-postgres');
      expect(role.rules.flatMap((r: any) => r.resources).sort()).toEqual(['configmaps', 'pods']);
    }
    for (const o of objects) {
      const clusterScoped = o.kind === 'Namespace' || o.kind === 'CustomResourceDefinition';
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(clusterScoped ? undefined : 'fencer');
      expect(o.metadata.labels?.['app.kubernetes.io/part-of'], `${o.kind}/${o.metadata.name}`).toBe('fencer');
    }
    for (const w of workloads(objects)) {
      // Only Patroni's members talk to the Kubernetes API.
      expect(w.spec.template.spec.automountServiceAccountToken, w.metadata.name).toBe(
        patroni !== undefined && w.metadata.name === 'fencer-postgres',
      );
      // A Service named fencer would otherwise put FENCER_SERVICE_HOST, FENCER_PORT... beside fencer's FENCER_* settings.
      expect(w.spec.template.spec.enableServiceLinks, w.metadata.name).toBe(false);
    }
  });

  it('carries the CRDs of crds/ unchanged', () => {
    const objects = render(name);
    const crds = readdirSync(join(ROOT, 'crds')).filter((f) => f.endsWith('.yaml'));
    expect(objects.filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(crds.length);
    for (const file of crds) {
      const original = parse(readFileSync(join(ROOT, 'crds', file), 'utf8'));
      const copy = find(objects, 'CustomResourceDefinition', original.metadata.name);
      expect(copy.apiVersion).toBe(original.apiVersion);
      expect(copy.spec).toEqual(original.spec);
    }
  });

  it('gives every container an image, resources, a locked-down security context, and volumes that exist', () => {
    for (const w of workloads(render(name))) {
      const pod = w.spec.template.spec;
      expect(
        selects(w.spec.selector.matchLabels, w.spec.template.metadata.labels),
        `${w.metadata.name}: selector matches its pods`,
      ).toBe(true);
      expect(pod.securityContext.runAsNonRoot, w.metadata.name).toBe(true);
      expect(pod.securityContext.runAsUser, w.metadata.name).toBeGreaterThan(0);
      const volumes = new Set(
        [...(pod.volumes ?? []), ...(w.spec.volumeClaimTemplates ?? []).map((t: any) => t.metadata)].map(
          (v: any) => v.name,
        ),
      );
      for (const c of allContainers(w)) {
        const where = `${w.metadata.name}/${c.name}`;
        expect(c.image, where).toMatch(/^(fencer|fencer-patroni|postgres):/);
        expect(c.resources.requests.cpu, where).toBeDefined();
        expect(parseMemory(c.resources.requests.memory), where).toBeGreaterThan(0);
        expect(parseMemory(c.resources.limits.memory), where).toBeGreaterThanOrEqual(
          parseMemory(c.resources.requests.memory)!,
        );
        expect(c.securityContext.allowPrivilegeEscalation, where).toBe(false);
        expect(c.securityContext.readOnlyRootFilesystem, where).toBe(true);
        expect(c.securityContext.capabilities.drop, where).toEqual(['ALL']);
        for (const mount of c.volumeMounts ?? [])
          expect(volumes.has(mount.name), `${where}: volume ${mount.name}`).toBe(true);
        // A container that serves gets probes, on ports it declares.
        if (c.ports) {
          const ports = new Set(c.ports.flatMap((p: any) => [p.name, p.containerPort]));
          for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
            expect(c[probe], `${where}: ${probe}`).toBeDefined();
            if (c[probe].httpGet) expect(ports.has(c[probe].httpGet.port), `${where}: ${probe} port`).toBe(true);
          }
        }
      }
    }
  });

  it('runs three replicas with their pod names, the listening address and port they are probed and served on, and the database URL', async () => {
    const objects = render(name);
    const sts = find(objects, 'StatefulSet', 'fencer-control-plane');
    expect(sts.spec.replicas).toBe(3);
    expect(sts.spec.template.metadata.labels).toMatchObject(CP);
    const [container] = sts.spec.template.spec.containers;
    expect(container.command).toEqual(FENCER_ENTRY);
    const env = environment(objects, container, { 'metadata.name': 'fencer-control-plane-0' });
    const { opts, command } = await parseFencer(
      registerReplicaCommand,
      container.args.map((a: string) => expand(a, env)),
    );
    expect(container.args[0]).toBe('replica');
    expect(opts.name).toBe('fencer-control-plane-0'); // the pod's name: unique, and stable in a StatefulSet
    expect(['0.0.0.0', '::']).toContain(opts.host);
    expect(opts.advertiseUrl).toBe('https://fencer-control-plane-0.fencer-replicas:8080'); // what status lists, not 0.0.0.0
    const http = container.ports.find((p: any) => p.name === 'http');
    expect(Number(opts.port)).toBe(http.containerPort);
    expect(opts.databaseUrl).toBeUndefined(); // DATABASE_URL, from the Secret: not on the command line
    expect(container.env.find((e: any) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef).toEqual({
      name: 'fencer-database',
      key: 'url',
    });
    for (const option of command.options.filter((o) => o.mandatory))
      expect(container.args, `${option.long} is given`).toContain(option.long);
    expect(container.livenessProbe.httpGet.path).toBe('/healthz'); // the process answers: no database involved
    expect(container.readinessProbe.httpGet.path).toBe('/readyz'); // SELECT 1
    expect(container.startupProbe.httpGet.path).toBe('/healthz');
    expect(timingsFromEnv(env)).toEqual(DEFAULT_TIMINGS);
    // SIGTERM hands the lease over; the grace period covers the preStop pause, a lease and more.
    const preStop = container.lifecycle.preStop.sleep.seconds;
    expect(sts.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
      preStop + DEFAULT_TIMINGS.leaseMs / 1000 + 5,
    );
  });

  it('spreads the replicas over nodes and keeps two of three through voluntary disruptions', () => {
    const objects = render(name);
    const pod = find(objects, 'StatefulSet', 'fencer-control-plane').spec.template.spec;
    const anti = pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm;
    expect(anti.topologyKey).toBe('kubernetes.io/hostname');
    expect(anti.labelSelector.matchLabels).toEqual(CP);
    const spread = pod.topologySpreadConstraints.find((t: any) => t.topologyKey === 'kubernetes.io/hostname');
    expect(spread).toMatchObject({
      maxSkew: 1,
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: CP },
    });
    const pdb = find(objects, 'PodDisruptionBudget', 'fencer-control-plane');
    expect(pdb.spec.minAvailable).toBe(2);
    expect(podsSelectedBy(objects, pdb.spec.selector.matchLabels).map((w) => w.metadata.name)).toEqual([
      'fencer-control-plane',
    ]);
  });

  it('has Services that select their pods, on ports the pods declare', () => {
    const objects = render(name);
    for (const svc of objects.filter((o) => o.kind === 'Service')) {
      // Patroni labels its members' pods with their role at run time (role: master, the primary).
      const { role: _role, ...selector } = svc.spec.selector;
      const targets = podsSelectedBy(objects, selector);
      expect(targets, `Service ${svc.metadata.name} selects one workload`).toHaveLength(1);
      const ports = targets[0].spec.template.spec.containers.flatMap((c: any) => c.ports ?? []);
      for (const port of svc.spec.ports)
        expect(
          ports.some((p: any) => p.name === port.targetPort || p.containerPort === port.targetPort),
          `${svc.metadata.name}:${port.name}`,
        ).toBe(true);
    }
    expect(find(objects, 'Service', 'fencer').spec).toMatchObject({
      type: 'ClusterIP',
      selector: CP,
      ports: [{ name: 'http', port: 8080 }],
    });
    const headless = find(objects, 'Service', 'fencer-replicas');
    expect(headless.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true, selector: CP });
    expect(find(objects, 'StatefulSet', 'fencer-control-plane').spec.serviceName).toBe('fencer-replicas');
  });

  it('runs one agent per node under the node name, on the control plane timings, listing every replica by its own DNS name', async () => {
    const objects = render(name);
    const ds = find(objects, 'DaemonSet', 'fencer-agent');
    expect(ds.spec.updateStrategy.rollingUpdate.maxSurge).toBe(0); // never two agents of one node
    const pod = ds.spec.template.spec;
    const container = pod.containers[0];
    expect(container.command).toEqual(FENCER_ENTRY);
    const env = environment(objects, container, { 'spec.nodeName': 'worker-1' });
    const { opts, command } = await parseFencer(
      registerAgentCommand,
      container.args.map((a: string) => expand(a, env)),
    );
    expect(container.args[0]).toBe('agent');
    expect(container.env.find((e: any) => e.name === 'NODE_NAME').valueFrom.fieldRef.fieldPath).toBe('spec.nodeName');
    expect(opts.name).toEqual(['worker-1']);
    for (const option of command.options.filter((o) => o.mandatory))
      expect(container.args, `${option.long} is given`).toContain(option.long);
    expect(parseCpu(opts.cpu)).toBeGreaterThan(0);
    expect(parseMemory(opts.memory)).toBeGreaterThan(0);
    expect(opts.labels).toMatchObject({ pool: 'default' });
    // Its metrics and health on a port it declares, on every address (Prometheus and the kubelet come from outside the pod).
    expect(container.ports.find((p: any) => p.name === 'metrics').containerPort).toBe(opts.metricsPort);
    expect(opts.metricsHost).toBe('0.0.0.0');
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    // Its join token and the replicas' CA from Secrets (docs/security.md, Node identity), nothing else of them.
    const mounted = (file: string) => {
      const mount = container.volumeMounts.find((m: any) => file.startsWith(`${m.mountPath}/`));
      return pod.volumes.find((v: any) => v.name === mount.name).secret;
    };
    expect(mounted(opts.joinTokenFile).secretName).toBe('fencer-join-token');
    expect(mounted(opts.ca)).toMatchObject({ secretName: 'fencer-tls', items: [{ key: 'ca.crt', path: 'ca.crt' }] });
    // Each replica once, by the headless Service: an agent moves on down its list when one fails.
    const sts = find(objects, 'StatefulSet', 'fencer-control-plane');
    const headless = find(objects, 'Service', sts.spec.serviceName);
    const port = headless.spec.ports.find((p: any) => p.name === 'http').port;
    const expected = Array.from(
      { length: sts.spec.replicas },
      (_, i) => `https://${sts.metadata.name}-${i}.${headless.metadata.name}:${port}`,
    );
    expect(opts.replicas).toEqual(expected);
    // The same timings ConfigMap as the replicas: the self-fence is the death rule minus a margin.
    const timingsOf = (c: any) =>
      c.envFrom.map((f: any) => f.configMapRef.name).filter((n: string) => n.startsWith('fencer-timings'));
    expect(timingsOf(container)).toEqual(timingsOf(sts.spec.template.spec.containers[0]));
    expect(timingsOf(container)).toHaveLength(1);
    expect(timingsFromEnv(env)).toEqual(DEFAULT_TIMINGS);
    // The run log and its generation counter on the node, in a directory the agent's user owns.
    const mount = container.volumeMounts.find((m: any) => opts.logFile.startsWith(`${m.mountPath}/`));
    expect(pod.volumes.find((v: any) => v.name === mount.name).hostPath.type).toBe('DirectoryOrCreate');
    const init = pod.initContainers[0];
    expect(init.volumeMounts).toContainEqual(mount);
    expect(init.command.join(' ')).toContain(
      `chownSync('${mount.mountPath}', ${pod.securityContext.runAsUser}, ${pod.securityContext.runAsGroup})`,
    );
    expect(init.securityContext.capabilities.add).toEqual(['CHOWN']);
  });

  it('exports metrics to Prometheus: pod annotations, or a ServiceMonitor instead', () => {
    const objects = render(name);
    const sts = find(objects, 'StatefulSet', 'fencer-control-plane');
    const annotations = sts.spec.template.metadata.annotations ?? {};
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor');
    if (!monitor) {
      const http = sts.spec.template.spec.containers[0].ports.find((p: any) => p.name === 'http');
      expect(annotations).toEqual({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(http.containerPort),
        'prometheus.io/path': '/metrics',
      });
      return;
    }
    expect(Object.keys(annotations).filter((k) => k.startsWith('prometheus.io/'))).toEqual([]); // not scraped twice
    expect(monitor.metadata.namespace).toBe('fencer');
    const services = objects.filter(
      (o) => o.kind === 'Service' && selects(monitor.spec.selector.matchLabels, o.metadata.labels),
    );
    expect(services.map((s) => s.metadata.name)).toEqual(['fencer-replicas']); // every replica, ready or not
    for (const endpoint of monitor.spec.endpoints) {
      expect(endpoint.path).toBe('/metrics');
      expect(services[0].spec.ports.map((p: any) => p.name)).toContain(endpoint.port);
    }
  });

  it("exports the agents' metrics: pod annotations, or a PodMonitor instead", () => {
    const objects = render(name);
    const ds = find(objects, 'DaemonSet', 'fencer-agent');
    const annotations = ds.spec.template.metadata.annotations ?? {};
    const port = ds.spec.template.spec.containers[0].ports.find((p: any) => p.name === 'metrics');
    const monitor = objects.find((o) => o.kind === 'PodMonitor');
    if (!monitor) {
      expect(annotations).toEqual({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(port.containerPort),
        'prometheus.io/path': '/metrics',
      });
      return;
    }
    expect(Object.keys(annotations).filter((k) => k.startsWith('prometheus.io/'))).toEqual([]); // not scraped twice
    expect(monitor.metadata.namespace).toBe('fencer');
    expect(podsSelectedBy(objects, monitor.spec.selector.matchLabels).map((w) => w.metadata.name)).toEqual([
      'fencer-agent',
    ]);
    expect(monitor.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
  });

  it("takes credentials from Secrets: the replicas' key set, certificate and the agents' join token (stored by an init container), over TLS", async () => {
    const objects = render(name);
    const pod = find(objects, 'StatefulSet', 'fencer-control-plane').spec.template.spec;
    const [container] = pod.containers;
    const env = environment(objects, container, { 'metadata.name': 'fencer-control-plane-0' });
    const { opts } = await parseFencer(
      registerReplicaCommand,
      container.args.map((a: string) => expand(a, env)),
    );
    const secretOf = (c: any, file: string) => {
      const mount = c.volumeMounts.find((m: any) => file.startsWith(`${m.mountPath}/`));
      return pod.volumes.find((v: any) => v.name === mount.name).secret.secretName;
    };
    expect(secretOf(container, env.FENCER_JWKS!)).toBe('fencer-auth');
    expect(secretOf(container, opts.tlsCert)).toBe('fencer-tls');
    expect(secretOf(container, opts.tlsKey)).toBe('fencer-tls');
    expect(opts.insecureHttp).toBeUndefined();
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'])
      expect(container[probe].httpGet.scheme, probe).toBe('HTTPS');
    const init = pod.initContainers.find((c: any) => c.args?.[0] === 'token');
    const initEnv = environment(objects, init, {});
    const program = new Command().exitOverride();
    const { registerTokenCommands } = await import('../../src/cli/token.js');
    registerTokenCommands(program);
    const create = program.commands[0]!.commands.find((c) => c.name() === 'create')!.exitOverride();
    let tokenOpts: any;
    create.action((o: unknown) => {
      tokenOpts = o;
    });
    await program.parseAsync(
      init.args.map((a: string) => expand(a, initEnv)),
      { from: 'user' },
    );
    expect(tokenOpts).toMatchObject({ join: true });
    expect(secretOf(init, tokenOpts.tokenFile)).toBe('fencer-join-token');
    expect(init.env.find((e: any) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef.name).toBe('fencer-database');
    // Readable by the pods' own user alone.
    expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsUser);
  });

  it('mounts the TLS Secret whole (kubelet updates it on renewal; a subPath would not be); with cert-manager, a Certificate renews it for every name clients use', async () => {
    const objects = render(name);
    const sts = find(objects, 'StatefulSet', 'fencer-control-plane');
    const pod = sts.spec.template.spec;
    const [container] = pod.containers;
    const tlsVolume = pod.volumes.find((v: any) => v.secret?.secretName === 'fencer-tls').name;
    const mounts = container.volumeMounts.filter((m: any) => m.name === tlsVolume);
    expect(mounts.length).toBeGreaterThan(0);
    for (const mount of mounts) expect(mount.subPath, 'no subPath').toBeUndefined();
    const certificates = objects.filter((o) => o.kind === 'Certificate');
    if (!name.includes('cert-manager')) {
      expect(certificates).toEqual([]);
      return;
    }
    const serving = certificates.find((c) => c.spec.secretName === 'fencer-tls');
    expect(serving.spec.isCA).toBeUndefined();
    // Renewed before its end, by an Issuer of the render whose CA is itself a Certificate here.
    const hours = (d: string) => Number(/^(\d+)h$/.exec(d)![1]);
    expect(hours(serving.spec.renewBefore)).toBeLessThan(hours(serving.spec.duration));
    const issuer = find(objects, 'Issuer', serving.spec.issuerRef.name);
    const ca = certificates.find((c) => c.spec.secretName === issuer.spec.ca.secretName);
    expect(ca.spec.isCA).toBe(true);
    expect(serving.spec.usages).toContain('server auth');
    // Every host a client reaches a replica by: each pod's advertised name (the agents' list) and the Service.
    const env = environment(objects, container, { 'metadata.name': 'fencer-control-plane-0' });
    const { opts } = await parseFencer(
      registerReplicaCommand,
      container.args.map((a: string) => expand(a, env)),
    );
    const agent = find(objects, 'DaemonSet', 'fencer-agent').spec.template.spec.containers[0];
    const agentEnv = environment(objects, agent, { 'spec.nodeName': 'worker-1' });
    const { opts: agentOpts } = await parseFencer(
      registerAgentCommand,
      agent.args.map((a: string) => expand(a, agentEnv)),
    );
    const service = find(objects, 'Service', 'fencer');
    const hosts = [opts.advertiseUrl, ...agentOpts.replicas].map((url: string) => new URL(url).hostname);
    hosts.push(service.metadata.name, `${service.metadata.name}.${service.metadata.namespace}.svc`);
    const covers = (pattern: string, host: string) =>
      pattern.startsWith('*.')
        ? host.slice(host.indexOf('.') + 1) === pattern.slice(2) && !host.slice(0, host.indexOf('.')).includes('.')
        : pattern === host;
    for (const host of hosts)
      expect(
        serving.spec.dnsNames.some((p: string) => covers(p, host)),
        host,
      ).toBe(true);
  });

  it('lets agents reach only the replicas, the replicas only PostgreSQL, and PostgreSQL only the replicas', () => {
    const objects = render(name);
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    const policyOf = (w: any) => {
      const found = policies.filter((p) => selects(p.spec.podSelector.matchLabels, w.spec.template.metadata.labels));
      expect(found, `one NetworkPolicy selects ${w.metadata.name}`).toHaveLength(1);
      return found[0];
    };
    const agents = find(objects, 'DaemonSet', 'fencer-agent');
    const replicas = find(objects, 'StatefulSet', 'fencer-control-plane');
    const agentPolicy = policyOf(agents);
    expect(agentPolicy.spec.policyTypes).toContain('Egress');
    const agentPeers = agentPolicy.spec.egress.filter((e: any) => e.to).flatMap((e: any) => e.to);
    expect(agentPeers.map((p: any) => podsSelectedBy(objects, p.podSelector.matchLabels))).toEqual([[replicas]]);
    const egressPorts = (policy: any) =>
      policy.spec.egress.flatMap((e: any) => e.ports.map((p: any) => p.port)).filter((p: number) => p !== 53);
    expect(egressPorts(agentPolicy)).toEqual([8080]);
    expect(egressPorts(policyOf(replicas))).toEqual([5432]);
    const postgres = objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'fencer-postgres');
    if (postgres) {
      const from = policyOf(postgres).spec.ingress.flatMap((i: any) => i.from);
      // Patroni's members also replicate from each other.
      expect(from.map((p: any) => podsSelectedBy(objects, p.podSelector.matchLabels))).toEqual(
        postgres.spec.replicas > 1 ? [[replicas], [postgres]] : [[replicas]],
      );
      const url = new URL(Buffer.from(find(objects, 'Secret', 'fencer-database').data.url, 'base64').toString());
      expect(url.searchParams.get('sslmode')).toBe('disable'); // set, inside the policy's fence
    }
  });

  it('has a PostgreSQL whose URL the replicas read, or expects the Secret fencer-database', () => {
    const objects = render(name);
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'fencer-database');
    const postgres = objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'fencer-postgres');
    if (RENDERS[name]!.overlay.endsWith('external-postgres')) {
      expect(secret).toBeUndefined(); // made by hand, with the URL of your PostgreSQL
      expect(postgres).toBeUndefined();
      return;
    }
    const decode = (value: string) => Buffer.from(value.replace(/\s/g, ''), 'base64').toString('utf8');
    const url = new URL(decode(secret.data.url));
    const container = postgres.spec.template.spec.containers[0];
    if (container.name === 'patroni') {
      // Three members under Patroni; the URL names the Service of the one labelled primary.
      const config = parse(
        find(
          objects,
          'ConfigMap',
          postgres.spec.template.spec.volumes.find((v: any) => v.name === 'config').configMap.name,
        ).data['patroni.yml'],
      );
      expect(postgres.spec.replicas).toBe(3);
      expect(config.bootstrap.dcs).toMatchObject({ synchronous_mode: true, ttl: 10, loop_wait: 1, retry_timeout: 3 });
      expect(config.kubernetes.role_label).toBe('role');
      const env = Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
      expect(env.PATRONI_SUPERUSER_PASSWORD.secretKeyRef).toEqual({ name: 'fencer-database', key: 'password' });
      expect(decodeURIComponent(url.password)).toBe(decode(secret.data.password));
      expect(decodeURIComponent(url.username)).toBe(config.postgresql.authentication.superuser.username);
      const svc = find(objects, 'Service', url.hostname);
      expect(svc.spec.selector).toEqual({ ...postgres.spec.selector.matchLabels, role: 'master' });
      expect(svc.spec.ports.map((p: any) => p.port)).toContain(Number(url.port));
      expect(find(objects, 'Service', postgres.spec.serviceName).spec.clusterIP).toBe('None');
      expect(config.bootstrap.dcs.postgresql.parameters.max_connections).toBeGreaterThanOrEqual(
        20 * (find(objects, 'StatefulSet', 'fencer-control-plane').spec.replicas + 1),
      );
      return;
    }
    const env = Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
    expect(env.POSTGRES_PASSWORD.secretKeyRef).toEqual({ name: 'fencer-database', key: 'password' });
    expect(decodeURIComponent(url.password)).toBe(decode(secret.data.password));
    expect(decodeURIComponent(url.username)).toBe(env.POSTGRES_USER);
    expect(url.pathname).toBe(`/${env.POSTGRES_DB}`);
    const svc = find(objects, 'Service', url.hostname);
    expect(postgres.spec.serviceName).toBe(svc.metadata.name);
    expect(podsSelectedBy(objects, svc.spec.selector)).toEqual([postgres]);
    expect(svc.spec.ports.map((p: any) => p.port)).toContain(Number(url.port));
    // Connections: about 20 a replica, with one more replica during a rolling update.
    const maxConnections = Number(container.args[container.args.indexOf('-c') + 1].replace('max_connections=', ''));
    expect(maxConnections).toBeGreaterThanOrEqual(
      20 * (find(objects, 'StatefulSet', 'fencer-control-plane').spec.replicas + 1),
    );
  });
});
