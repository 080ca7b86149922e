// Reading a Prometheus text exposition for the benchmarks' stall figures.
import { describe, expect, it } from 'vitest';
import { samples } from '../../src/bench/stalls.js';

describe('samples', () => {
  it('reads every series of the metric, and nothing of metrics whose names only start the same', () => {
    const text = [
      '# HELP fencer_agent_self_fences_total Times a node fenced itself.',
      '# TYPE fencer_agent_self_fences_total counter',
      'fencer_agent_self_fences_total{node="node-1"} 2',
      'fencer_agent_self_fences_total{node="node-2"} 0',
      'fencer_agent_self_fences_total_extra 9',
      'fencer_process_nodejs_eventloop_lag_max_seconds 1.25',
    ].join('\n');
    expect(samples(text, 'fencer_agent_self_fences_total')).toEqual([2, 0]);
    expect(samples(text, 'fencer_process_nodejs_eventloop_lag_max_seconds')).toEqual([1.25]);
    expect(samples(text, 'fencer_missing')).toEqual([]);
  });
});
