// Test-only faults a replica injects into its own API, so that tests and the chaos campaign can
// overload one path while others work: a node's reports answered 503 while its heartbeats pass,
// its snapshots held back while keepalives flow (a saturated API pool looks exactly like that),
// its heartbeats failing while its reports pass. FENCER_TEST_FAULTS names a JSON file that the
// test rewrites at will; every replica reads it. Never set in production: without it, nothing
// here runs.
//
// { "reports":    { "nodes": ["node-1"], "status": 503 },   // "*" matches every node
//   "heartbeats": { "nodes": ["*"], "status": 503 },
//   "snapshots":  { "nodes": ["node-1"], "delayMs": 3000 },
//   "pool":       { "replicas": ["replica-2"], "holdMs": 3000, "id": "f7" },  // every API connection held
//   "loop":       { "replicas": ["replica-1"], "blockMs": 400, "everyMs": 500 } }  // its event loop busy in slices
// Write it whole (a temporary file renamed over it): a half-written file reads as no faults.

import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';

export interface PathFault {
  nodes: string[];
  /** Answer with this status instead of serving the request. */
  status?: number;
  /** Serve it, this much later (snapshots: each delivered this long after it was read, in order). */
  delayMs?: number;
}

/** A replica takes every connection of its API pool and holds them (once per id). */
export interface PoolFault {
  replicas: string[];
  holdMs: number;
  id: string;
}

/** A replica's event loop kept busy, blockMs of synchronous work every everyMs: what a long parse or sort does to it. */
export interface LoopFault {
  replicas: string[];
  blockMs: number;
  everyMs: number;
}

export interface Faults {
  reports?: PathFault;
  heartbeats?: PathFault;
  snapshots?: PathFault;
  pool?: PoolFault;
  loop?: LoopFault;
}

const REREAD_MS = 50;

/** Puts these faults in force for every replica reading `path`: written whole, then renamed over. */
export function writeFaults(path: string, faults: Faults): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(faults));
  renameSync(`${path}.tmp`, path);
}

let cache: { path: string; readAt: number; mtimeMs: number; faults: Faults } | undefined;

/** The faults in force now (none unless FENCER_TEST_FAULTS is set and its file exists). */
export function currentFaults(env: NodeJS.ProcessEnv = process.env): Faults {
  const path = env.FENCER_TEST_FAULTS;
  if (!path) return {};
  const now = performance.now();
  if (cache && cache.path === path && now - cache.readAt < REREAD_MS) return cache.faults;
  let faults: Faults = {};
  let mtimeMs = -1; // read again next time unless the file was read whole
  try {
    const mtime = statSync(path).mtimeMs;
    faults =
      cache && cache.path === path && cache.mtimeMs === mtime
        ? cache.faults
        : (JSON.parse(readFileSync(path, 'utf8')) as Faults);
    mtimeMs = mtime;
  } catch {
    faults = {}; // no file (or one half written): no faults
  }
  cache = { path, readAt: now, mtimeMs, faults };
  return faults;
}

/** The fault on `kind` that applies to `node`, if any. */
export function faultFor(kind: 'reports' | 'heartbeats' | 'snapshots', node: string): PathFault | undefined {
  const fault = currentFaults()[kind];
  if (!fault) return undefined;
  return fault.nodes.includes('*') || fault.nodes.includes(node) ? fault : undefined;
}

interface Connectable {
  connect(): Promise<{ release(): void }>;
  options: { max?: number };
}

/** While a loop fault names `replica`, blocks its event loop in slices. Returns what stops it. */
export function blockLoopOnFault(replica: string, env: NodeJS.ProcessEnv = process.env): () => void {
  if (!env.FENCER_TEST_FAULTS) return () => undefined;
  let next = 0;
  const timer = setInterval(() => {
    const fault = currentFaults(env).loop;
    if (!fault || !(fault.replicas.includes('*') || fault.replicas.includes(replica))) return;
    const now = performance.now();
    if (now < next) return;
    next = now + fault.everyMs;
    while (performance.now() - now < fault.blockMs) {
      // busy: nothing else on this loop runs meanwhile
    }
  }, 10);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Watches for pool faults naming `replica` and holds every connection of `pool` for the fault's
 * time: what a burst of slow user queries does to a replica, for real. Returns what stops it.
 */
export function exhaustPoolOnFault(
  pool: Connectable,
  replica: string,
  env: NodeJS.ProcessEnv = process.env,
): () => void {
  if (!env.FENCER_TEST_FAULTS) return () => undefined;
  const applied = new Set<string>();
  const timer = setInterval(() => {
    const fault = currentFaults(env).pool;
    if (!fault || applied.has(fault.id) || !(fault.replicas.includes('*') || fault.replicas.includes(replica))) return;
    applied.add(fault.id);
    const held = Array.from({ length: pool.options.max ?? 10 }, () => pool.connect());
    setTimeout(() => {
      for (const client of held)
        void client.then(
          (c) => c.release(),
          () => undefined,
        );
    }, fault.holdMs);
  }, REREAD_MS);
  timer.unref();
  return () => clearInterval(timer);
}
