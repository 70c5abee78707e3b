/**
 * Which workers a chaos run only ever pauses: those whose work the run must
 * see done to prove anything. A fenced run whose late writer was killed
 * before each first act sent no late write, and proved nothing about them.
 */
import { describe, expect, it } from '@jest/globals';
import { LATE_WRITER_SLOT } from '../../chaos/fenced-writes.js';
import { pauseOnlySlots } from '../../chaos/runner.js';

describe('pauseOnlySlots', () => {
  it("spares a fenced run's late writer from kills", () => {
    expect(pauseOnlySlots({ gcSlot: undefined, fenced: true })).toEqual([LATE_WRITER_SLOT]);
  });

  it('spares the gc, and both when a fenced run has one', () => {
    expect(pauseOnlySlots({ gcSlot: 7, fenced: false })).toEqual([7]);
    expect(pauseOnlySlots({ gcSlot: 7, fenced: true })).toEqual([7, LATE_WRITER_SLOT]);
  });

  it('kills any worker of a plain run', () => {
    expect(pauseOnlySlots({ gcSlot: undefined, fenced: false })).toEqual([]);
  });
});
