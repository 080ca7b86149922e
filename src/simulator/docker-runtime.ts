// The `docker` runtime: every simulated process is a container of the fencer image on the
// host network (there is no bridge: everything talks over 127.0.0.1). Chaos maps one to one:
// kill is `docker kill` (SIGKILL), freeze is `docker pause` (the cgroup freezer), resume is
// `docker unpause`. The cluster home is bind-mounted at the same path, so a node's NDJSON log
// lands on the host where tests and the checker read it; container output is appended to the
// same per-process log file the process runtime writes. Containers are removed once they exit.
import Docker from 'dockerode';
import { createWriteStream, mkdirSync } from 'node:fs';
import { constants, cpus } from 'node:os';
import { dirname } from 'node:path';
import { delay } from '../lifecycle.js';
import { NotRunningError, type ExitEvent, type ProcessHandle, type ProcessSpec, type Runtime } from './runtime.js';

export const DEFAULT_IMAGE = 'fencer:latest';
/** The fencer binary inside the image (scripts/build-image.sh, Dockerfile). */
const ENTRY = ['node', '/app/dist/cli/main.js'];
const LABEL_CLUSTER = 'dev.fencer.cluster';
const LABEL_NAME = 'dev.fencer.name';
/** After the container exited, how long its output may still take to arrive. */
const LOG_DRAIN_MS = 1000;

export interface DockerRuntimeOptions {
  /** Part of every container's name, `fencer-<clusterId>-<name>`, and a label. */
  clusterId: string;
  /** Bind-mounted at the same path (logs, node run logs, test hooks live there). */
  home: string;
  image?: string;
  docker?: Docker;
}

interface Box {
  container: Docker.Container;
  pid: number;
  frozen: boolean;
  /** Resolves once it exited, its output is in the log and the container is removed. */
  exited: Promise<void>;
}

export class DockerRuntime implements Runtime {
  private readonly docker: Docker;
  private readonly image: string;
  private readonly boxes = new Map<string, Box>();
  /** Exited containers still being removed: a restart under the same name waits for it. */
  private readonly removals = new Map<string, Promise<void>>();
  private readonly listeners = new Set<(event: ExitEvent) => void>();

  constructor(private readonly options: DockerRuntimeOptions) {
    this.docker = options.docker ?? new Docker();
    this.image = options.image ?? DEFAULT_IMAGE;
  }

  containerName(name: string): string {
    return `fencer-${this.options.clusterId}-${name}`;
  }

  async start(spec: ProcessSpec): Promise<ProcessHandle> {
    if (this.isRunning(spec.name)) throw new Error(`${spec.name} is already running (pid ${this.pid(spec.name)})`);
    await this.removals.get(spec.name);
    // One left by a supervisor that died would hold the name.
    await removeQuietly(this.docker.getContainer(this.containerName(spec.name)));

    const container = await this.docker.createContainer({
      name: this.containerName(spec.name),
      Image: this.image,
      Cmd: [...ENTRY, ...spec.args],
      Env: Object.entries({ ...passedThrough(process.env), ...spec.env }).map(([k, v]) => `${k}=${v}`),
      // Files it writes into the home belong to whoever runs the cluster.
      User: process.getuid && process.getgid ? `${process.getuid()}:${process.getgid()}` : undefined,
      Labels: { [LABEL_CLUSTER]: this.options.clusterId, [LABEL_NAME]: spec.name },
      HostConfig: {
        NetworkMode: 'host',
        Binds: [`${this.options.home}:${this.options.home}`],
        NanoCpus: spec.cpus === undefined ? undefined : nanoCpus(spec.cpus),
        Memory: spec.memoryBytes,
      },
    });
    let box: Box;
    try {
      // Attached before it starts, so not a line of its output is missed.
      const output = await container.attach({ stream: true, stdout: true, stderr: true });
      mkdirSync(dirname(spec.logFile), { recursive: true });
      // Appending, so a restarted process continues the story of the one before it.
      const log = createWriteStream(spec.logFile, { flags: 'a' });
      this.docker.modem.demuxStream(output, log, log);
      const drained = new Promise<void>((resolve) => {
        output.once('end', resolve);
        output.once('close', resolve);
        output.once('error', () => resolve());
      }).then(() => new Promise<void>((resolve) => log.end(resolve)));

      await container.start();
      const pid = (await container.inspect()).State.Pid;
      const exited = this.watchExit(spec.name, container, pid, drained);
      box = { container, pid, frozen: false, exited };
    } catch (err) {
      await removeQuietly(container);
      throw err;
    }
    this.boxes.set(spec.name, box);
    return { name: spec.name, pid: box.pid };
  }

  async kill(name: string): Promise<void> {
    await this.running(name).container.kill({ signal: 'SIGKILL' });
  }

  async freeze(name: string): Promise<void> {
    const box = this.running(name);
    await box.container.pause();
    box.frozen = (await box.container.inspect()).State.Paused;
  }

  async resume(name: string): Promise<void> {
    const box = this.running(name);
    await box.container.unpause();
    box.frozen = (await box.container.inspect()).State.Paused;
  }

  async stop(name: string, timeoutMs = 5000): Promise<void> {
    const box = this.boxes.get(name);
    if (!box) return;
    // A paused container cannot take SIGTERM, and `fencer cluster freeze` may have paused it.
    const state = await box.container.inspect().then(
      (info) => info.State,
      () => undefined,
    );
    if (state?.Paused) await box.container.unpause().catch(() => {});
    // `docker stop` sends SIGTERM, then SIGKILL after t whole seconds.
    await box.container.stop({ t: Math.max(1, Math.ceil(timeoutMs / 1000)) }).catch(() => {});
    await box.exited;
  }

  isRunning(name: string): boolean {
    return this.boxes.has(name);
  }

  isFrozen(name: string): boolean {
    return this.boxes.get(name)?.frozen ?? false;
  }

  pid(name: string): number | undefined {
    return this.boxes.get(name)?.pid;
  }

  names(): string[] {
    return [...this.boxes.keys()];
  }

  onExit(listener: (event: ExitEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async watchExit(
    name: string,
    container: Docker.Container,
    pid: number,
    drained: Promise<void>,
  ): Promise<void> {
    let code: number | null = null;
    try {
      code = ((await container.wait()) as { StatusCode: number }).StatusCode;
    } catch {
      // The engine went away: the container is as good as gone.
    }
    const stopWaiting = new AbortController();
    await Promise.race([drained.finally(() => stopWaiting.abort()), delay(LOG_DRAIN_MS, stopWaiting.signal)]);
    // A container the engine cannot remove now is left for the next start() under its name.
    const removal = removeQuietly(container).catch(() => {});
    this.removals.set(name, removal);
    void removal.then(() => {
      if (this.removals.get(name) === removal) this.removals.delete(name);
    });
    if (this.boxes.get(name)?.container === container) this.boxes.delete(name);
    const signal = signalOf(code);
    for (const listener of this.listeners) listener({ name, pid, code: signal ? null : code, signal });
    await removal;
  }

  private running(name: string): Box {
    const box = this.boxes.get(name);
    if (!box) throw new NotRunningError(name);
    return box;
  }
}

/**
 * Why the docker runtime cannot run here, or undefined when it can: an engine must answer and
 * the image must exist (nothing can be pulled).
 */
export async function dockerUnavailable(image = DEFAULT_IMAGE, docker = new Docker()): Promise<string | undefined> {
  try {
    await docker.ping();
  } catch (err) {
    return `no Docker engine answers (${err instanceof Error ? err.message : String(err)})`;
  }
  try {
    await docker.getImage(image).inspect();
  } catch {
    return `the image ${image} is missing: run \`make image\``;
  }
  return undefined;
}

/** fencer's own settings (log level, timings) reach the containers as they reach children. */
function passedThrough(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env))
    if (key.startsWith('FENCER_') && value !== undefined) out[key] = value;
  return out;
}

/** The engine refuses more CPUs than the machine has; a node may claim more than that. */
function nanoCpus(cores: number): number {
  return Math.round(Math.min(cores, cpus().length) * 1e9);
}

/** Exit status 128+n means signal n ended the container's init, as a shell reports it. */
function signalOf(code: number | null): NodeJS.Signals | null {
  if (code === null || code <= 128) return null;
  const entry = Object.entries(constants.signals).find(([, n]) => n === code - 128);
  return entry ? (entry[0] as NodeJS.Signals) : null;
}

async function removeQuietly(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true });
  } catch (err) {
    // 404: already gone; 409: its removal is already in progress.
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== 404 && status !== 409) throw err;
  }
}

/**
 * The runtime a benchmark runs on: docker when asked and able, else processes, with a note that
 * says why (the result must not pass off processes for containers).
 */
export async function benchRuntime(
  asked: 'docker' | 'process',
  log: (line: string) => void,
): Promise<{ runtime: 'docker' | 'process'; runtimeNote?: string }> {
  if (asked !== 'docker') return { runtime: asked };
  const problem = await dockerUnavailable();
  if (!problem) return { runtime: 'docker' };
  const runtimeNote = `asked for docker, ran on processes: ${problem}`;
  log(runtimeNote);
  return { runtime: 'process', runtimeNote };
}
