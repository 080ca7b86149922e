import { describe, it, expect } from 'vitest';
import { formatCpu, formatMemory, parseCpu, parseMemory } from '../../src/domain/quantity.js';

describe('parseCpu', () => {
  const cases: Array<[string | number, number | null]> = [
    ['500m', 500],
    ['2', 2000],
    [2, 2000],
    [0.5, 500],
    ['0.5', 500],
    ['1.5', 1500],
    ['1.1', 1100], // exact: a float would give 1100.0000000000002 and round up to 1101
    ['.5', 500],
    ['1.', 1000],
    ['+1', 1000],
    ['0.1m', 1], // rounded up, never to zero
    ['1500m', 1500],
    ['1k', 1_000_000],
    ['1e3', 1_000_000],
    ['1E3', 1_000_000],
    ['5e-1', 500],
    [1e-4, 1],
    ['0', 0],
    ['-1', -1000], // parses; validation refuses it
    ['abc', null],
    ['', null],
    ['1 m', null],
    ['1mm', null],
    ['m', null],
    ['1.2.3', null],
    ['0x10', null],
    ['1e999', null],
    ['9'.repeat(80), null],
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, null],
  ];
  it.each(cases)('parseCpu(%j) = %j', (input, expected) => {
    expect(parseCpu(input)).toBe(expected);
  });
});

describe('parseMemory', () => {
  const cases: Array<[string | number, number | null]> = [
    ['256Mi', 268_435_456],
    ['1Gi', 1_073_741_824],
    ['1Ki', 1024],
    ['1.5Ki', 1536],
    ['2Ti', 2 * 1024 ** 4],
    ['1Pi', 1024 ** 5],
    ['1k', 1000],
    ['128M', 128_000_000],
    ['1G', 1_000_000_000],
    ['1T', 1e12],
    ['1P', 1e15],
    ['1e3', 1000],
    ['1e+3', 1000],
    ['123', 123],
    [123, 123],
    [1024.5, 1025], // fractional bytes round up
    ['1m', 1], // a thousandth of a byte is still a byte
    ['0.5', 1],
    ['0', 0],
    ['12Qi', null],
    ['1KiB', null],
    ['1ki', null],
    ['Mi', null],
    ['8Ei', null], // beyond what a number holds exactly
    ['1E', null], // E is exa here, not an exponent: 1e18 bytes is too large
  ];
  it.each(cases)('parseMemory(%j) = %j', (input, expected) => {
    expect(parseMemory(input)).toBe(expected);
  });
});

describe('formatCpu', () => {
  const cases: Array<[number, string]> = [
    [500, '500m'],
    [2000, '2'],
    [1500, '1500m'],
    [1, '1m'],
    [0, '0'],
  ];
  it.each(cases)('formatCpu(%j) = %j', (millis, expected) => {
    expect(formatCpu(millis)).toBe(expected);
    expect(parseCpu(formatCpu(millis))).toBe(millis);
  });
});

describe('formatMemory', () => {
  const cases: Array<[number, string]> = [
    [268_435_456, '256Mi'],
    [1_073_741_824, '1Gi'],
    [1536, '1536'], // 1.5Ki is not a whole number of Ki
    [2048, '2Ki'],
    [1_000_000, '1000000'], // decimal sizes stay plain bytes
    [3 * 1024 ** 4, '3Ti'],
    [1024 ** 5, '1Pi'],
    [123, '123'],
    [0, '0'],
  ];
  it.each(cases)('formatMemory(%j) = %j', (bytes, expected) => {
    expect(formatMemory(bytes)).toBe(expected);
    expect(parseMemory(formatMemory(bytes))).toBe(bytes);
  });
});
