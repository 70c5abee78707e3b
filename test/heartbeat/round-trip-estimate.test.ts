import { describe, expect, it } from '@jest/globals';
import { RoundTripEstimate } from '../../src/heartbeat/round-trip-estimate.js';

describe('RoundTripEstimate', () => {
  it('is 0 before any sample, then the first sample', () => {
    const estimate = new RoundTripEstimate();
    expect(estimate.estimate()).toBe(0);
    estimate.add(40);
    expect(estimate.estimate()).toBe(40);
  });

  it('barely moves for one slow reply', () => {
    const estimate = new RoundTripEstimate();
    for (let i = 0; i < 50; i++) estimate.add(10);
    estimate.add(1_010);
    expect(estimate.estimate()).toBeCloseTo(110, 5);
  });

  it('follows a server that stays slower, within a few dozen samples', () => {
    const estimate = new RoundTripEstimate();
    for (let i = 0; i < 50; i++) estimate.add(10);
    for (let i = 0; i < 40; i++) estimate.add(100);
    expect(estimate.estimate()).toBeGreaterThan(98);
    expect(estimate.estimate()).toBeLessThan(100);
  });

  it('counts a sample longer than its longest as that long', () => {
    const estimate = new RoundTripEstimate(750);
    estimate.add(3_000);
    expect(estimate.estimate()).toBe(750);
    expect(estimate.slow()).toBe(750);
  });

  it('tells how long a slow reply took of late: raised at once by one, lowered a tenth of the way by each faster one', () => {
    const estimate = new RoundTripEstimate();
    for (let i = 0; i < 50; i++) estimate.add(10);
    expect(estimate.slow()).toBe(10);
    estimate.add(1_010);
    expect(estimate.slow()).toBe(1_010);
    estimate.add(10);
    expect(estimate.slow()).toBeCloseTo(910, 5);
    for (let i = 0; i < 60; i++) estimate.add(10);
    expect(estimate.slow()).toBeLessThan(12);
  });
});
