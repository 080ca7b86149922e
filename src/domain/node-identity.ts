// Who speaks for a node (docs/security.md, "Node identity"). A new agent process registers with
// a join token (kubeadm's bootstrap token form) and is answered a node credential: a short-lived
// JWT for `system:node:NAME` in `system:nodes` whose `extra` names the process (its incarnation
// and generation). Every heartbeat, watch and report is checked against the node's row with it,
// so a process that a newer one replaced speaks for the node no more.
import { NODE_USER_PREFIX, NODES_GROUP, type UserInfo } from './rbac.js';

/** `id.secret`: 6 and 16 of [a-z0-9], as kubeadm's bootstrap tokens. A JWT never has this form. */
export const JOIN_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

/** The issuer of node credentials: the replicas themselves, with the cluster's node-credential key. */
export const NODE_CREDENTIAL_ISSUER = 'fencer:nodes';

/** How long a node credential lives; a heartbeat answers a fresh one once half of it is gone. */
export const NODE_CREDENTIAL_TTL_MS = 10 * 60_000;

/**
 * How far past the database's clock a registration's generation may be. Agents number their
 * processes at least by their wall clock in milliseconds (src/agent/agent.ts, nextGeneration); a
 * larger number is taken as the database's clock plus this, so nobody can register a generation
 * that no later process of the node could ever outnumber.
 */
export const GENERATION_SKEW_MS = 5 * 60_000;

/** The keys of a node credential's `extra`. */
export const INCARNATION_EXTRA = 'fencer.dev/incarnation';
export const GENERATION_EXTRA = 'fencer.dev/generation';

/** The process a node credential stands for. */
export interface NodeIdentity {
  node: string;
  incarnation: string;
  generation: number;
}

export interface JoinToken {
  id: string;
  secret: string;
}

export function parseJoinToken(text: string): JoinToken | null {
  const match = JOIN_TOKEN_PATTERN.exec(text);
  return match ? { id: match[1]!, secret: match[2]! } : null;
}

/** The node process a user is, when the user is a node credential (name, group, extra); else null. */
export function nodeIdentityOf(user: UserInfo): NodeIdentity | null {
  if (!user.username.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return null;
  const incarnation = user.extra?.[INCARNATION_EXTRA];
  const generation = user.extra?.[GENERATION_EXTRA];
  if (incarnation?.length !== 1 || generation?.length !== 1) return null;
  const number = Number(generation[0]);
  if (!Number.isSafeInteger(number) || number < 0) return null;
  return { node: user.username.slice(NODE_USER_PREFIX.length), incarnation: incarnation[0]!, generation: number };
}
