// Command-line option values checked the same way in every command: a bad one ends the
// command with one line on stderr naming the flag.

export function runtimeOption(raw: string): 'process' | 'docker' {
  if (raw !== 'process' && raw !== 'docker') fail(`--runtime: "${raw}" is neither process nor docker`);
  return raw;
}

export function positive(raw: string, flag: string, zeroAllowed = false): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (zeroAllowed ? 0 : 1))
    fail(`${flag}: "${raw}" is not a ${zeroAllowed ? 'non-negative' : 'positive'} integer`);
  return n;
}

export function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

export function postgresOption(raw: string): 'embedded' | 'ha' {
  if (raw !== 'embedded' && raw !== 'ha') fail(`--postgres: "${raw}" is neither embedded nor ha`);
  return raw;
}
