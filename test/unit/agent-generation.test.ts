// A node's agent processes are numbered so that the control plane refuses a late registration from
// an older one (node-health.test.ts). The numbers must grow from start to start, also when the
// clock steps back, and also when the file that keeps them is lost (a re-imaged Kubernetes node).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nextGeneration } from '../../src/agent/agent.js';

describe('nextGeneration', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fencer-generation-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('grows from start to start, also when the clock steps back, and keeps the number beside the run log', () => {
    const log = join(dir, 'nested', 'n1.ndjson');
    const first = nextGeneration(log, 1_000_000);
    expect(first).toBe(1_000_000);
    expect(nextGeneration(log, 1_000_000)).toBe(1_000_001); // two starts in one millisecond
    expect(nextGeneration(log, 5)).toBe(1_000_002); // the clock stepped back
    expect(nextGeneration(log, 2_000_000)).toBe(2_000_000);
    expect(readFileSync(`${log}.generation`, 'utf8')).toBe('2000000');
  });

  it('outnumbers every earlier process when the file is lost, by the clock', () => {
    const log = join(dir, 'n1.ndjson');
    const before = nextGeneration(log, Date.now() - 60_000);
    rmSync(`${log}.generation`);
    expect(nextGeneration(log)).toBeGreaterThan(before);
  });
});
