/**
 * RecentMinimum: the smallest value of the last one to two windows, known
 * once a whole window with values has passed. A lower value counts at
 * once; a low is forgotten once two windows have passed without it. A fake
 * clock drives the windows.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { RecentMinimum } from '../../src/primitives/recent-minimum.js';

const WINDOW_MS = 1_000;

const clock = { now: 0 };
let minimum: RecentMinimum;

beforeEach(() => {
  clock.now = 0;
  minimum = new RecentMinimum({ now: () => clock.now }, WINDOW_MS);
});

describe('RecentMinimum', () => {
  it('has no value until a whole window with values in it has passed', () => {
    expect(minimum.value).toBeUndefined();
    minimum.add(600);
    expect(minimum.value).toBeUndefined();
    clock.now = WINDOW_MS;
    expect(minimum.value).toBe(600);
  });

  it('is the smallest value of the window before and this one, and drops at once', () => {
    minimum.add(600);
    minimum.add(700);
    clock.now = WINDOW_MS;
    expect(minimum.value).toBe(600);
    minimum.add(5);
    expect(minimum.value).toBe(5);
  });

  it('keeps a low through the next window, and forgets it in the one after', () => {
    minimum.add(5);
    clock.now = 1_500;
    minimum.add(600);
    expect(minimum.value).toBe(5);
    clock.now = 2_100;
    minimum.add(650);
    expect(minimum.value).toBe(600);
    clock.now = 3_100;
    expect(minimum.value).toBe(650);
  });

  it('forgets everything after two windows with no value added, and learns again over a whole window', () => {
    minimum.add(5);
    clock.now = 2 * WINDOW_MS;
    expect(minimum.value).toBeUndefined();
    minimum.add(600);
    expect(minimum.value).toBeUndefined();
    clock.now = 3 * WINDOW_MS;
    expect(minimum.value).toBe(600);
  });

  it('counts the first window from the first value, wherever in a window that came', () => {
    clock.now = 999;
    minimum.add(477);
    clock.now = 1_000;
    expect(minimum.value).toBeUndefined();
    clock.now = 999 + WINDOW_MS - 1;
    expect(minimum.value).toBeUndefined();
    clock.now = 999 + WINDOW_MS;
    expect(minimum.value).toBe(477);
  });

  it('after a whole window with no value, counts a whole window again from the next value', () => {
    minimum.add(5);
    clock.now = 2_500;
    expect(minimum.value).toBeUndefined();
    clock.now = 2_900;
    minimum.add(600);
    clock.now = 3_800;
    expect(minimum.value).toBeUndefined();
    clock.now = 3_900;
    expect(minimum.value).toBe(600);
  });

  it('counts windows from the first value, however irregularly values come', () => {
    minimum.add(5);
    clock.now = 1_999;
    minimum.add(600);
    // Still the window after the one the 5 came in.
    expect(minimum.value).toBe(5);
    clock.now = 2_000;
    expect(minimum.value).toBe(600);
  });
});
