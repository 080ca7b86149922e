// Kubernetes resource quantities ("500m", "2", "256Mi", "1e3"), in the units the scheduler
// computes with: CPU in millicores, memory in bytes. Arithmetic is exact (BigInt), because
// "1.1" CPU must be 1100 millicores, not the 1100.0000000000002 a float would give.

// <sign>?<number><suffix>? where a suffix is binary SI, decimal SI or a decimal exponent.
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

const BINARY_POWER: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_POWER: Record<string, number> = { m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

// Longer input or larger exponents cannot describe a resource a node has; refusing them keeps
// a hostile "1e999999999" from costing a huge BigInt.
const MAX_LENGTH = 64;
const MAX_EXPONENT = 64;

/** CPU in whole millicores ("500m" → 500, "2" → 2000, 0.5 → 500), or null if not a quantity. */
export function parseCpu(value: string | number): number | null {
  return parseScaled(value, 3);
}

/** Memory in bytes ("256Mi" → 268435456, "1k" → 1000), or null if not a quantity. */
export function parseMemory(value: string | number): number | null {
  return parseScaled(value, 0);
}

/** Millicores as Kubernetes writes them: whole cores plain ("2"), the rest in m ("1500m"). */
export function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** Bytes with the largest binary suffix that divides them exactly ("1Gi"), else plain. */
export function formatMemory(bytes: number): string {
  if (bytes === 0) return '0';
  for (const [suffix, power] of Object.entries(BINARY_POWER).reverse()) {
    const unit = 2 ** power;
    if (bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}

/**
 * The quantity times 10^unitPower, rounded up to an integer as Kubernetes does (so "0.1m"
 * CPU is 1 millicore, never 0). Null when it is not a quantity or not a safe integer.
 */
function parseScaled(value: string | number, unitPower: number): number | null {
  const text = typeof value === 'number' ? numberText(value) : value;
  if (text === null || text.length > MAX_LENGTH) return null;
  const match = QUANTITY.exec(text);
  if (!match) return null;
  const [, sign = '', number = '', suffix, exponent] = match;
  const [whole = '', fraction = ''] = number.split('.');

  let power10 = unitPower - fraction.length;
  let power2 = 0;
  if (suffix !== undefined) {
    if (suffix in BINARY_POWER) power2 = BINARY_POWER[suffix] ?? 0;
    else power10 += DECIMAL_POWER[suffix] ?? 0;
  }
  if (exponent !== undefined) {
    const e = Number(exponent);
    if (Math.abs(e) > MAX_EXPONENT) return null;
    power10 += e;
  }

  let numerator = BigInt(`${whole}${fraction}` || '0') * 2n ** BigInt(power2);
  let denominator = 1n;
  if (power10 >= 0) numerator *= 10n ** BigInt(power10);
  else denominator = 10n ** BigInt(-power10);
  if (sign === '-') numerator = -numerator;

  const result = ceilDiv(numerator, denominator);
  if (result > BigInt(Number.MAX_SAFE_INTEGER) || result < BigInt(Number.MIN_SAFE_INTEGER)) return null;
  return Number(result) || 0; // never -0
}

function numberText(value: number): string | null {
  return Number.isFinite(value) ? String(value) : null;
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator; // truncates toward zero
  return numerator % denominator > 0n ? quotient + 1n : quotient;
}
