// A Jobs list's selectors as the store filters on them (src/store/sql/jobs/list.sql): label
// equalities and the phase. The /api/v1 routes serve these only; the Kubernetes route hands the
// store what it can filter on and selects in memory when a selector says more.
import { HttpError } from '../errors/http-error.js';
import type { JobFilter } from '../store/jobs.js';
import type { JobPhase } from '../domain/resources.js';
import { parseLabelSelector, parsePhaseSelector } from '../domain/names.js';

const PHASES: readonly JobPhase[] = [
  'Pending',
  'Assigned',
  'Running',
  'Succeeded',
  'Failed',
  'Cancelled',
  'Skipped',
  'Dead',
];

export interface SelectorQuery {
  labelSelector?: string;
  fieldSelector?: string;
}

/** The filter of `labelSelector=k=v,…` and `fieldSelector=status.phase=P`; 400 for any other selector. */
export function jobFilterOf(query: SelectorQuery): JobFilter {
  try {
    const filter: JobFilter = {};
    if (query.labelSelector) filter.labels = parseLabelSelector(query.labelSelector);
    if (query.fieldSelector) {
      const phase = parsePhaseSelector(query.fieldSelector, PHASES);
      if (phase) filter.phase = phase as JobPhase;
    }
    return filter;
  } catch (error) {
    throw new HttpError(400, (error as Error).message);
  }
}

/**
 * The filter that selects exactly what a Kubernetes Jobs list's selectors select, or null when
 * they say more than the store filters on (!=, in, existence, other fields) or name a key twice
 * (both must hold there, the last would win here).
 */
export function storeJobFilterOf(query: SelectorQuery): JobFilter | null {
  const requirements = (selector: string | undefined) =>
    (selector ?? '').split(',').filter((p) => p.trim() !== '').length;
  let filter: JobFilter;
  try {
    filter = jobFilterOf(query);
  } catch {
    return null;
  }
  if (Object.keys(filter.labels ?? {}).length !== requirements(query.labelSelector)) return null;
  if (requirements(query.fieldSelector) > 1) return null;
  return filter;
}
