// A CPU profile of every fencer process of one role in a benchmark, without changing how the
// benchmark starts them (node refuses --cpu-prof in NODE_OPTIONS; a preload is allowed):
//
//   FENCER_PROFILE=replica FENCER_PROFILE_DIR=/tmp/prof NODE_OPTIONS="--import $PWD/scripts/cpu-profile.mjs" \
//     node dist/cli/main.js bench packing ...
//   node scripts/profile-stalls.mjs /tmp/prof/replica-1234.cpuprofile
//
// Each process whose arguments name the role (replica, agent) writes ROLE-PID.cpuprofile at its
// exit (a SIGKILLed one writes nothing). Sampled every millisecond.
import inspector from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const role = process.env.FENCER_PROFILE;
if (role && process.argv.includes(role)) {
  const dir = process.env.FENCER_PROFILE_DIR ?? '.';
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  // The main thread's session answers synchronously, so the profile is written before exit ends.
  process.on('exit', () =>
    session.post('Profiler.stop', (err, result) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${role}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    }),
  );
}
