// Switches the test-only faults of src/faults.ts for every replica of a cluster: the file is
// written whole (renamed over), so a replica never reads half of it.
import { renameSync, writeFileSync } from 'node:fs';
import type { Faults } from '../../src/faults.js';

export function setFaults(file: string, faults: Faults): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(faults));
  renameSync(`${file}.tmp`, file);
}
