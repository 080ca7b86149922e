// What a .cpuprofile (scripts/cpu-profile.mjs) spent its time on, and its longest stretches
// without an idle sample (what held the event loop, or, where samples come far apart, that the
// process got no CPU: the sampler runs every millisecond only while the process is scheduled).
//
//   node scripts/profile-stalls.mjs FILE [stretches=5] [after-seconds=0]
import { readFileSync } from 'node:fs';

const [file, stretchCount = '5', afterSeconds = '0'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/profile-stalls.mjs FILE.cpuprofile [stretches] [after-seconds]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parents = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id);
const frame = (id) => {
  const f = nodes.get(id).callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
};
const stack = (id) => {
  const frames = [];
  for (let at = id; at !== undefined; at = parents.get(at)) frames.push(frame(at));
  return frames;
};
const idle = (id) => ['(idle)', '(program)'].includes(nodes.get(id).callFrame.functionName);
let clock = profile.startTime;
const times = profile.timeDeltas.map((d) => (clock += d));

function top(counts, total, n) {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => `  ${((100 * count) / total).toFixed(1).padStart(5)} %  ${name}`)
    .join('\n');
}

function summary(from, to) {
  const self = new Map();
  const inclusive = new Map();
  let busy = 0;
  for (let i = from; i <= to; i++) {
    const id = profile.samples[i];
    if (nodes.get(id).callFrame.functionName === '(idle)') continue;
    busy++;
    const frames = stack(id);
    self.set(frames[0], (self.get(frames[0]) ?? 0) + 1);
    for (const f of new Set(frames.slice(0, -1))) inclusive.set(f, (inclusive.get(f) ?? 0) + 1);
  }
  return { self, inclusive, busy };
}

const whole = summary(0, profile.samples.length - 1);
console.log(`${file}: ${whole.busy} busy samples of ${profile.samples.length}`);
console.log(`self:\n${top(whole.self, whole.busy, 20)}`);
console.log(`inclusive:\n${top(whole.inclusive, whole.busy, 30)}`);

const stretches = [];
let start = -1;
for (let i = 0; i < profile.samples.length; i++) {
  if (!idle(profile.samples[i])) {
    if (start < 0) start = i;
  } else if (start >= 0) {
    stretches.push([start, i - 1]);
    start = -1;
  }
}
const after = profile.startTime + Number(afterSeconds) * 1e6;
for (const [from, to] of stretches
  .filter(([from]) => times[from] >= after)
  .sort((a, b) => times[b[1]] - times[b[0]] - (times[a[1]] - times[a[0]]))
  .slice(0, Number(stretchCount))) {
  const ms = (times[to] - times[from]) / 1000;
  const s = summary(from, to);
  console.log(
    `\nbusy ${ms.toFixed(0)} ms from +${((times[from] - profile.startTime) / 1e6).toFixed(1)} s: ` +
      `${to - from + 1} samples (${(ms / (to - from + 1)).toFixed(1)} ms apart)`,
  );
  console.log(`self:\n${top(s.self, s.busy, 6)}`);
  console.log(`inclusive:\n${top(s.inclusive, s.busy, 10)}`);
}
