import { describe, it, expect } from 'vitest';
import { formatDuration, parseDuration } from '../../src/domain/duration.js';

describe('parseDuration', () => {
  const cases: Array<[string, number | null]> = [
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5s', 1500],
    ['.5s', 500],
    ['1.s', 1000],
    ['1m30s', 90_000],
    ['2h45m10.5s', 9_910_500],
    ['1s500ms', 1500],
    ['+5s', 5000],
    ['1500us', 2], // sub-millisecond remainders round up
    ['1500µs', 2],
    ['1ns', 1],
    ['0s', 0], // parses; validation refuses it
    ['0.0001ms', 1],
    ['', null],
    ['0', null], // unit-less, even though Go accepts a bare 0
    ['30', null],
    ['-5s', null],
    ['5', null],
    ['s', null],
    ['.s', null],
    ['5d', null],
    ['5 s', null],
    ['5S', null],
    ['forever', null],
    ['1h-30m', null],
    ['1.5.s', null],
    ['3000000h', null], // beyond Go's 292 years
  ];
  it.each(cases)('parseDuration(%j) = %j', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });
});

describe('formatDuration', () => {
  const cases: Array<[number, string]> = [
    [90_000, '1m30s'],
    [500, '500ms'],
    [1500, '1.5s'],
    [30_000, '30s'],
    [3_600_000, '1h'],
    [5_400_000, '1h30m'],
    [3_661_001, '1h1m1.001s'],
    [61_250, '1m1.25s'],
    [1, '1ms'],
    [0, '0s'],
  ];
  it.each(cases)('formatDuration(%j) = %j', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });
  it.each(cases.filter(([ms]) => ms > 0))('parseDuration(formatDuration(%j)) round-trips', (ms) => {
    expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});
