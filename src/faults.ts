// Test-only faults a replica injects into its own API, so that tests and the chaos campaign can
// overload one path while others work: a node's reports answered 503 while its heartbeats pass,
// its snapshots held back while keepalives flow (a saturated API pool looks exactly like that),
// its heartbeats failing while its reports pass. FENCER_TEST_FAULTS names a JSON file that the
// test rewrites at will; every replica reads it. Never set in production: without it, nothing
// here runs.
//
// { "reports":    { "nodes": ["node-1"], "status": 503 },   // "*" matches every node
//   "heartbeats": { "nodes": ["*"], "status": 503 },
//   "snapshots":  { "nodes": ["node-1"], "delayMs": 3000 } }
// Write it whole (a temporary file renamed over it): a half-written file reads as no faults.

import { readFileSync, statSync } from 'node:fs';

export interface PathFault {
  nodes: string[];
  /** Answer with this status instead of serving the request. */
  status?: number;
  /** Serve it, this much later. */
  delayMs?: number;
}

export interface Faults {
  reports?: PathFault;
  heartbeats?: PathFault;
  snapshots?: PathFault;
}

const REREAD_MS = 50;

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
    faults = cache && cache.path === path && cache.mtimeMs === mtime ? cache.faults : (JSON.parse(readFileSync(path, 'utf8')) as Faults);
    mtimeMs = mtime;
  } catch {
    faults = {}; // no file (or one half written): no faults
  }
  cache = { path, readAt: now, mtimeMs, faults };
  return faults;
}

/** The fault on `kind` that applies to `node`, if any. */
export function faultFor(kind: keyof Faults, node: string): PathFault | undefined {
  const fault = currentFaults()[kind];
  if (!fault) return undefined;
  return fault.nodes.includes('*') || fault.nodes.includes(node) ? fault : undefined;
}
