// The `process` runtime: every simulated process is a child of this one, running the built
// fencer binary under the same Node.js. Needs nothing installed, so it is the default.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname } from 'node:path';
import { NotRunningError, type ExitEvent, type ProcessHandle, type ProcessSpec, type Runtime } from './runtime.js';

interface Child {
  process: ChildProcess;
  pid: number;
  frozen: boolean;
  exited: Promise<void>;
}

export class ProcessRuntime implements Runtime {
  private readonly children = new Map<string, Child>();
  private readonly listeners = new Set<(event: ExitEvent) => void>();

  /** @param entry the fencer binary (dist/cli/main.js) every process runs. */
  constructor(private readonly entry: string) {}

  async start(spec: ProcessSpec): Promise<ProcessHandle> {
    if (this.isRunning(spec.name)) throw new Error(`${spec.name} is already running (pid ${this.pid(spec.name)})`);
    mkdirSync(dirname(spec.logFile), { recursive: true });
    // Appending, so a restarted process continues the story of the one before it.
    const log = openSync(spec.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [this.entry, ...spec.args], {
        env: { ...process.env, ...spec.env },
        stdio: ['ignore', log, log],
      });
    } finally {
      closeSync(log); // the child holds its own copy of the descriptor
    }
    const pid = child.pid;
    if (pid === undefined) {
      // spawn failed; the reason arrives as an 'error' event.
      throw await new Promise<Error>((resolve) => child.once('error', resolve));
    }
    if (spec.nice) setPriority(pid, spec.nice);
    // A failed signal surfaces as an 'error' event; the exit listener tells the real story.
    child.on('error', () => {});
    const exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        // Only forget the entry if a newer process of the same name has not replaced it.
        if (this.children.get(spec.name)?.process === child) this.children.delete(spec.name);
        for (const listener of this.listeners) listener({ name: spec.name, pid, code, signal });
        resolve();
      });
    });
    this.children.set(spec.name, { process: child, pid, frozen: false, exited });
    return { name: spec.name, pid };
  }

  async kill(name: string): Promise<void> {
    this.running(name).process.kill('SIGKILL');
  }

  async freeze(name: string): Promise<void> {
    const child = this.running(name);
    child.process.kill('SIGSTOP');
    child.frozen = true;
  }

  async resume(name: string): Promise<void> {
    const child = this.running(name);
    child.process.kill('SIGCONT');
    child.frozen = false;
  }

  async stop(name: string, timeoutMs = 5000): Promise<void> {
    const child = this.children.get(name);
    if (!child) return;
    child.process.kill('SIGTERM');
    // A stopped process keeps SIGTERM pending until it runs again, and it may have been frozen
    // by someone else (`fencer cluster freeze` signals the pid directly).
    child.process.kill('SIGCONT');
    const timer = setTimeout(() => child.process.kill('SIGKILL'), timeoutMs);
    await child.exited;
    clearTimeout(timer);
  }

  isRunning(name: string): boolean {
    return this.children.has(name);
  }

  isFrozen(name: string): boolean {
    return this.children.get(name)?.frozen ?? false;
  }

  pid(name: string): number | undefined {
    return this.children.get(name)?.pid;
  }

  /** Every process this runtime started and that is still running. */
  names(): string[] {
    return [...this.children.keys()];
  }

  onExit(listener: (event: ExitEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private running(name: string): Child {
    const child = this.children.get(name);
    if (!child) throw new NotRunningError(name);
    return child;
  }
}

/** The last lines of a process's log, to show why it died. */
export function logTail(logFile: string, lines = 20): string {
  if (!existsSync(logFile)) return '(no log)';
  // Only the end of the file: a long-running supervisor's log can be large.
  const fd = openSync(logFile, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } finally {
    closeSync(fd);
  }
}
