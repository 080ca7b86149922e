// Escalation: nobody grants what they do not hold. Kubernetes refuses to create or update a Role
// or a binding that would give someone a permission its author lacks (in that namespace),
// unless the author may `escalate` roles or `bind` the role; the wiring of the RBAC routes is
// to call this with the author's rules (rulesFor) and the rules being granted, and refuse the
// write with the uncovered ones named. Coverage is judged as Kubernetes judges it: each granted
// rule is broken down into one verb × group × resource × name (or one verb × URL), and each
// piece must be covered by one rule the author holds.
import type { PolicyRule } from '../../domain/rbac.js';

const ALL = '*';

/** The pieces of `granted` none of `owned` covers (empty: no escalation). */
export function uncoveredRules(owned: readonly PolicyRule[], granted: readonly PolicyRule[]): PolicyRule[] {
  return granted.flatMap(breakdown).filter((piece) => !owned.some((rule) => covers(rule, piece)));
}

/** One rule as pieces of one verb, group, resource and name each (or one verb and URL). */
function breakdown(rule: PolicyRule): PolicyRule[] {
  const pieces: PolicyRule[] = [];
  for (const verb of rule.verbs) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) pieces.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
        for (const name of names)
          pieces.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] });
      }
    }
    for (const url of rule.nonResourceURLs ?? []) pieces.push({ verbs: [verb], nonResourceURLs: [url] });
  }
  return pieces;
}

function covers(owner: PolicyRule, piece: PolicyRule): boolean {
  const has = (set: readonly string[] | undefined, want: readonly string[] | undefined) =>
    (set ?? []).includes(ALL) || (want ?? []).every((w) => (set ?? []).includes(w));
  if (!has(owner.verbs, piece.verbs)) return false;
  if ((piece.nonResourceURLs ?? []).length > 0) {
    return (piece.nonResourceURLs ?? []).every((url) => (owner.nonResourceURLs ?? []).some((o) => urlCovers(o, url)));
  }
  if (!has(owner.apiGroups, piece.apiGroups)) return false;
  if (!resourcesCover(owner.resources ?? [], piece.resources ?? [])) return false;
  const ownerNames = owner.resourceNames ?? [];
  if (ownerNames.length === 0) return true;
  const pieceNames = piece.resourceNames ?? [];
  return pieceNames.length > 0 && pieceNames.every((n) => ownerNames.includes(n));
}

/** `*` covers everything, `jobs` covers jobs, `*\/status` covers jobs/status (and `*\/status` itself). */
function resourcesCover(owned: readonly string[], wanted: readonly string[]): boolean {
  if (owned.includes(ALL)) return true;
  return wanted.every((resource) => {
    if (owned.includes(resource)) return true;
    const slash = resource.indexOf('/');
    return slash >= 0 && owned.includes(`${ALL}/${resource.slice(slash + 1)}`);
  });
}

function urlCovers(owned: string, url: string): boolean {
  if (owned === url) return true;
  return owned.endsWith(ALL) && url.startsWith(owned.slice(0, -1));
}
