// `fencer cluster kill|freeze|resume|partition|heal postgres-primary` (or a member, pg-1): chaos
// on the HA database of `cluster up --postgres ha`, by the pids the state file keeps
// (src/simulator/ha-postgres.ts). Imported lazily by nothing heavy: the simulator module is
// loaded only when such a command runs.
import { readFileSync } from 'node:fs';
import { delay } from '../lifecycle.js';
import { fencerHome, readClusterState } from '../simulator/state.js';
import { fail } from './options.js';

export const POSTGRES_PRIMARY = 'postgres-primary';

export function isPostgresTarget(target: string): boolean {
  return target === POSTGRES_PRIMARY || /^pg-\d+$/.test(target);
}

/**
 * kill, freeze, partition: the member Patroni calls the primary (or the one named), by the pids
 * in the state file; then waits for another primary and says how long it took. resume, heal:
 * the member frozen or cut off (`postgres-primary`: the only one).
 */
export async function postgresFault(target: string, verb: string): Promise<void> {
  const state = readClusterState(fencerHome());
  if (!state) fail(`no cluster is running in ${fencerHome()} (start one with \`fencer cluster up --postgres ha\`)`);
  if (!state.ha) fail('this cluster runs no HA database (start it with `fencer cluster up --postgres ha`)');
  const ha = state.ha;
  const { currentPrimary, freezeMember, killMember, partitionMember, resumeMember } =
    await import('../simulator/ha-postgres.js');

  let member = ha.members.find((m) => m.name === target);
  if (verb === 'resume' || verb === 'heal') {
    if (!member) {
      const frozen = ha.members.filter((m) => isStopped(m.patroniPid));
      if (frozen.length !== 1)
        fail(
          frozen.length === 0
            ? 'no PostgreSQL member is frozen or cut off'
            : `several are: ${frozen.map((m) => m.name).join(', ')}; name one`,
        );
      member = frozen[0]!;
    }
    // Both: a healed member's PostgreSQL was never stopped, and SIGCONT costs it nothing.
    resumeMember(member);
    process.stdout.write(
      `${verb === 'resume' ? 'resumed' : 'healed'} ${member.name} (Patroni pid ${member.patroniPid})\n`,
    );
    return;
  }
  const primary = await currentPrimary(ha);
  member ??= primary ?? undefined;
  if (!member) fail('no PostgreSQL member is the primary right now (a failover is under way?)');
  const signalledAt = performance.now();
  ({ kill: killMember, freeze: freezeMember, partition: partitionMember })[verb as 'kill' | 'freeze' | 'partition'](
    member,
  );
  const role = primary?.name === member.name ? 'the primary' : 'a standby';
  const what = { kill: 'killed', freeze: 'froze', partition: 'cut off (its Patroni frozen)' }[verb] ?? verb;
  process.stdout.write(`${what} ${member.name} (Patroni pid ${member.patroniPid}), ${role}\n`);
  if (primary?.name !== member.name) return;
  const deadline = signalledAt + 120_000;
  while (performance.now() < deadline) {
    const now = await currentPrimary(ha);
    if (now && now.name !== member.name) {
      const ms = Math.round(performance.now() - signalledAt);
      process.stdout.write(`new primary: ${now.name}, ${ms} ms after the signal (Patroni ttl ${ha.settings.ttl} s)\n`);
      return;
    }
    await delay(100);
  }
  fail('no new primary within 120 s');
}

/** SIGSTOPped (state T in /proc/PID/stat). */
function isStopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const code = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return code === 'T' || code === 't';
  } catch {
    return false;
  }
}
