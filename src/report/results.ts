// What every benchmark result carries (the machine, the date) and where it goes: bench/results/.
import { cpus, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../paths.js';

export function machine(): string {
  return `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`;
}

/** Writes bench/results/<kind>-<date>.md and returns its path. */
export function writeResult(kind: string, report: string, date = new Date()): string {
  return writeResultFile(resultName(kind, date, 'md'), report);
}

/** The file name of a result: <kind>-<date>.<extension>, so a report and its plot pair up. */
export function resultName(kind: string, date: Date, extension: string): string {
  return `${kind}-${date.toISOString().slice(0, 19).replace(/[:T]/g, '-')}.${extension}`;
}

/** Writes bench/results/<name> and returns its path. */
export function writeResultFile(name: string, content: string): string {
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

/** The p-th percentile (nearest rank) of values; null for none. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
