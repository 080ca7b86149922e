import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunLog, readRunLog } from '../../src/agent/run-log.js';

const assignment = { id: 'asg-1', job: 'team-a/train', jobUid: 'uid-1', epoch: 3, attempt: 2 };

describe('RunLog', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fencer-run-log-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes one parseable JSON line per event, in order, on disk before returning', () => {
    const path = join(dir, 'nested', 'node-1.ndjson'); // the directory is created
    const log = new RunLog(path, 'node-1');
    log.start(assignment);
    // synchronous: the line is readable before anything else happens
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    log.stop(assignment, 'completed');
    log.reject({ ...assignment, id: 'asg-0', epoch: 2 }, 'stale-epoch');
    log.close();

    const raw = readFileSync(path, 'utf8');
    expect(raw.endsWith('\n')).toBe(true);
    const lines = raw
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((l) => [l.event, l.assignment, l.reason])).toEqual([
      ['start', 'asg-1', undefined],
      ['stop', 'asg-1', 'completed'],
      ['reject', 'asg-0', 'stale-epoch'],
    ]);
    const [start, stop] = lines as [Record<string, unknown>, Record<string, unknown>];
    expect(start).toMatchObject({
      node: 'node-1',
      job: 'team-a/train',
      jobUid: 'uid-1',
      epoch: 3,
      attempt: 2,
      pid: process.pid,
    });
    expect('reason' in start).toBe(false);
    expect(new Date(start.wallTime as string).getTime()).toBe(start.wallMs);
    expect(typeof start.monoNs).toBe('string');
    expect(BigInt(stop.monoNs as string) >= BigInt(start.monoNs as string)).toBe(true);
  });

  it('appends to an existing log (a restarted agent keeps its history)', () => {
    const path = join(dir, 'node.ndjson');
    const first = new RunLog(path, 'node-1');
    first.start(assignment);
    first.close();
    const second = new RunLog(path, 'node-1');
    second.stop(assignment, 'shutdown');
    second.close();
    expect(readRunLog(path).map((l) => l.event)).toEqual(['start', 'stop']);
  });

  it('reads back a log whose last line was torn by a SIGKILL', () => {
    const path = join(dir, 'node.ndjson');
    const log = new RunLog(path, 'node-1');
    log.start(assignment);
    log.close();
    appendFileSync(path, '{"event":"stop","node":"no');
    expect(readRunLog(path)).toHaveLength(1);
  });

  it('refuses to write once closed', () => {
    const log = new RunLog(join(dir, 'node.ndjson'), 'node-1');
    log.close();
    log.close(); // twice is fine
    expect(() => log.start(assignment)).toThrow(/closed/);
  });
});
