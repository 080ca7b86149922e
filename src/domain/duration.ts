// Durations as Go's time.ParseDuration reads them (and so Kubernetes): a sequence of decimal
// numbers, each with a unit: "30s", "1h30m", "1.5s", "500ms". fencer counts in milliseconds.
// Unlike Go, a bare "0" (no unit) and negative durations are refused: neither belongs in a manifest.

const NANOS_PER_UNIT: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const NANOS_PER_MS = 1_000_000n;
const MAX_NANOS = 2n ** 63n - 1n; // Go's limit: about 292 years

/** Milliseconds, rounded up to a whole one; null when it is not a non-negative duration. */
export function parseDuration(text: string): number | null {
  const body = text.startsWith('+') ? text.slice(1) : text;
  if (body === '') return null;
  // Sticky, and local so that no lastIndex survives a call: each component starts where the
  // last one ended, and anything between them is an error.
  const component = /(\d*)(?:\.(\d*))?([^\d.]+)/y;
  let nanos = 0n;
  while (component.lastIndex < body.length) {
    const match = component.exec(body);
    if (!match) return null;
    const [, whole = '', fraction = '', unit = ''] = match;
    const scale = NANOS_PER_UNIT[unit];
    if (scale === undefined || (whole === '' && fraction === '')) return null;
    nanos += BigInt(whole || '0') * scale;
    // Go keeps whole nanoseconds and drops any finer fraction.
    if (fraction !== '') nanos += (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
    if (nanos > MAX_NANOS) return null;
  }
  return Number((nanos + NANOS_PER_MS - 1n) / NANOS_PER_MS);
}

/** Go-style text without zero parts: 90000 → "1m30s", 500 → "500ms", 5400000 → "1h30m". */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const millis = total % 60_000;
  let text = '';
  if (hours > 0) text += `${hours}h`;
  if (minutes > 0) text += `${minutes}m`;
  if (millis > 0) text += `${seconds(millis)}s`;
  return text;
}

function seconds(millis: number): string {
  const whole = Math.floor(millis / 1000);
  const fraction = millis % 1000;
  if (fraction === 0) return String(whole);
  return `${whole}.${String(fraction).padStart(3, '0').replace(/0+$/, '')}`;
}

/** kubectl's HumanDuration: two units while they say something, one when the second is noise. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000); // toward zero, as Go's int() does
  if (seconds < -1) return '<invalid>'; // a clock far ahead of ours; a second of skew is "now"
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (days < 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}
