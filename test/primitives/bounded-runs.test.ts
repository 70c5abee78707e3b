import { describe, expect, it } from '@jest/globals';
import { BoundedRuns } from '../../src/primitives/bounded-runs.js';

/** A run that ends when the test says so. */
function gate(): { run: () => Promise<void>; open: () => void; started: () => boolean } {
  let open!: () => void;
  let started = false;
  const done = new Promise<void>((resolve) => (open = resolve));
  return {
    run: () => {
      started = true;
      return done;
    },
    open,
    started: () => started,
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('BoundedRuns', () => {
  it('starts a run only while fewer than the limit are under way, reading the limit at each start', async () => {
    let limit = 2;
    const runs = new BoundedRuns(() => limit);
    const [a, b, c, d] = [gate(), gate(), gate(), gate()];
    await runs.add(a.run);
    await runs.add(b.run);
    const addingC = runs.add(c.run);
    await tick();
    expect(c.started()).toBe(false);
    a.open();
    await addingC;
    expect(c.started()).toBe(true);

    limit = 1; // b and c still run: d waits until both have ended
    const addingD = runs.add(d.run);
    b.open();
    await tick();
    expect(d.started()).toBe(false);
    c.open();
    await addingD;
    expect(d.started()).toBe(true);
    d.open();
    await runs.settled();
  });

  it('lets one run through even when the limit reads zero', async () => {
    const runs = new BoundedRuns(() => 0);
    const one = gate();
    await runs.add(one.run);
    expect(one.started()).toBe(true);
    one.open();
    await runs.settled();
  });
});
