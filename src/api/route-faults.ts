// Applies the test-only faults of src/testing/overload-faults.ts to a route: wait, then answer with the fault's
// status instead of serving. Nothing happens unless FENCER_TEST_FAULTS is set.
import { faultFor } from '../testing/overload-faults.js';
import { HttpError } from '../errors/http-error.js';
import { delay } from '../lifecycle.js';

export async function injectFault(kind: 'reports' | 'heartbeats', node: string): Promise<void> {
  const fault = faultFor(kind, node);
  if (!fault) return;
  if (fault.delayMs) await delay(fault.delayMs);
  if (fault.status) throw new HttpError(fault.status, `test fault: ${kind} of node ${node} answered ${fault.status}`);
}
