// What this machine's processes used, from /proc (Linux): CPU seconds from /proc/PID/stat and
// resident memory from /proc/PID/status. A benchmark reads them before and after a stretch and
// takes the difference. PostgreSQL is a postmaster and its children, one per session and one per
// background task: sessions come and go, and the CPU of a child that has exited is added to the
// postmaster's cutime/cstime once reaped, so the postmaster's own time with its reaped children
// plus its live children's own time counts every process PostgreSQL ran.
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ, 100 on every Linux architecture). */
export const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcStat {
  comm: string;
  ppid: number;
  /** CPU seconds in user and kernel mode, of the process itself. */
  ownSeconds: number;
  /** CPU seconds of its children that exited and were waited for. */
  reapedChildrenSeconds: number;
}

/**
 * Parses /proc/PID/stat. The command name (field 2) is in parentheses and may hold spaces and
 * parentheses itself, so the fields are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`not a /proc/PID/stat line: ${text.slice(0, 80)}`);
  // After ')': field 3 (state) is at index 0, so field n is at index n - 3.
  const fields = text
    .slice(close + 2)
    .trim()
    .split(' ');
  const field = (n: number) => Number(fields[n - 3]);
  return {
    comm: text.slice(open + 1, close),
    ppid: field(4),
    ownSeconds: (field(14) + field(15)) / CLOCK_TICKS_PER_SECOND,
    reapedChildrenSeconds: (field(16) + field(17)) / CLOCK_TICKS_PER_SECOND,
  };
}

/** A `Name:   123 kB` line of /proc/PID/status, in bytes; null when absent. */
export function statusBytes(text: string, name: 'VmRSS' | 'VmHWM'): number | null {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
  return match ? Number(match[1]) * 1024 : null;
}

export function readProcStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Resident memory now and at its peak (the kernel's high-water mark), in bytes; null once gone. */
export function residentMemory(pid: number): { rssBytes: number; peakBytes: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = statusBytes(text, 'VmRSS');
    const peak = statusBytes(text, 'VmHWM');
    return rss === null || peak === null ? null : { rssBytes: rss, peakBytes: peak };
  } catch {
    return null;
  }
}

/** CPU seconds the processes have used so far (a process gone already counts 0). */
export function cpuSecondsOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (readProcStat(pid)?.ownSeconds ?? 0), 0);
}

/**
 * The postmaster of a PostgreSQL backend running on this machine, or null when there is none
 * (the server is elsewhere: the pid is then some other process or none).
 */
export function postmasterOf(backendPid: number): number | null {
  const backend = readProcStat(backendPid);
  if (backend?.comm !== 'postgres') return null;
  const postmaster = readProcStat(backend.ppid);
  return postmaster?.comm === 'postgres' ? backend.ppid : null;
}

/** CPU seconds every process of this PostgreSQL server has used so far (see the top). */
export function postgresCpuSeconds(postmasterPid: number): number {
  const postmaster = readProcStat(postmasterPid);
  if (!postmaster) return 0;
  let seconds = postmaster.ownSeconds + postmaster.reapedChildrenSeconds;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat?.ppid === postmasterPid) seconds += stat.ownSeconds;
  }
  return seconds;
}

/** This process's CPU seconds so far (user and system, all its threads). */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * Resident memory (RSS) and its proportional share (PSS: each shared page divided by the
 * processes that map it), from /proc/PID/smaps_rollup, in bytes; null once gone. PostgreSQL's
 * backends map the same shared buffers, so their RSS counts those once per backend and their PSS
 * adds up to what they use together.
 */
export function proportionalMemory(pid: number): { rssBytes: number; pssBytes: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name: string) => {
      const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
      return match ? Number(match[1]) * 1024 : null;
    };
    const rss = field('Rss');
    const pss = field('Pss');
    return rss === null || pss === null ? null : { rssBytes: rss, pssBytes: pss };
  } catch {
    return null;
  }
}
