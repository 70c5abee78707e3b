/**
 * Turns: when a client that releases a lock and asks for it again at once
 * stands aside, and how its turns grow while nobody else wants the lock.
 * Timed with a manual clock; integration/acquire/turns.test.ts runs real
 * clients against DynamoDB Local.
 */
import { describe, expect, it } from '@jest/globals';
import { CONTENTION_MEMORY_IN_TURNS, MAX_TURN_GROWTH, Turns, turnRequestOf, type PlanRequest } from '../../src/acquire/turns.js';

function manualClock(start = 1_000) {
  const clock = { t: start, now: () => clock.t };
  return clock;
}

const REFRESH = 100;
const request: PlanRequest = { refreshMs: REFRESH, turnLengthMs: 2 * REFRESH, mayWait: true };

/** Takes the lock as `plan` said, holds it `holdMs`, releases it, and asks again `gapMs` later. */
function cycle(turns: Turns, clock: { t: number }, holdMs: number, gapMs = 1, waitedForAnother = false) {
  const plan = turns.plan('L', request);
  clock.t += plan.standAsideMs;
  turns.taken(plan, clock.t, waitedForAnother);
  clock.t += holdMs;
  turns.released('L');
  clock.t += gapMs;
  return plan;
}

/**
 * Runs back-to-back cycles of 10 ms until the client stood aside `count`
 * times: for each stand-aside, how long the client had held the lock before
 * it, and when the stand-aside's acquisition took it back.
 */
function standAsides(turns: Turns, clock: { t: number }, count: number): Array<{ heldMs: number; takenAt: number }> {
  const asides: Array<{ heldMs: number; takenAt: number }> = [];
  let held = 0;
  for (let i = 0; i < 10_000 && asides.length < count; i++) {
    const before = clock.t;
    const plan = cycle(turns, clock, 10);
    held += 11;
    if (plan.kind === 'stands-aside') {
      asides.push({ heldMs: held, takenAt: before + plan.standAsideMs });
      held = 0;
    }
  }
  return asides;
}

/** How long the client held the lock before each of its first `count` stand-asides. */
const turnsHeld = (turns: Turns, clock: { t: number }, count: number): number[] => standAsides(turns, clock, count).map((aside) => aside.heldMs);

describe('Turns: standing aside', () => {
  it('a lock asked for again at once goes on with the turn until the turn has lasted its length', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 10);
    expect(cycle(turns, clock, 90).kind).toBe('new');
    expect(cycle(turns, clock, 90).kind).toBe('continues'); // 91 ms into the turn at its release
    const plan = turns.plan('L', request); // released 181 ms into a turn of 200: still on
    expect(plan.kind).toBe('continues');
    turns.taken(plan, clock.t, false);
    clock.t += 30;
    turns.released('L'); // 212 ms into it
    clock.t += 5;
    const aside = turns.plan('L', request);
    expect(aside).toMatchObject({ kind: 'stands-aside', standAsideMs: REFRESH - 5 });
  });

  it('a lock asked for a refresh period or more after its release starts a new turn', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 10);
    cycle(turns, clock, 250, REFRESH);
    expect(turns.plan('L', request).kind).toBe('new');
  });

  it('never stands aside for a call that may not wait, nor with an endless turn length', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 10);
    cycle(turns, clock, 250);
    expect(turns.plan('L', { ...request, mayWait: false }).kind).toBe('continues');
    expect(turns.plan('L', { ...request, turnLengthMs: Infinity }).kind).toBe('continues');
    const fresh = new Turns(clock, 10);
    const endless = { ...request, turnLengthMs: Infinity };
    const plan = fresh.plan('L', endless);
    fresh.taken(plan, clock.t, false);
    clock.t += 1_000_000;
    fresh.released('L');
    expect(fresh.plan('L', endless).kind).toBe('continues');
  });

  it('a turn where nobody took the lock while it stood aside lasts twice as long, up to its cap', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 10);
    const lengths = turnsHeld(turns, clock, 8);
    // Turns of 200 ms, then 400, 800, … until 32 × 200 ms: the time held between two stand-asides.
    const expected = [1, 2, 4, 8, 16, 32, 32, 32].map((growth) => growth * request.turnLengthMs);
    expect(lengths).toHaveLength(expected.length);
    lengths.forEach((length, i) => {
      expect(length).toBeGreaterThanOrEqual(expected[i] as number);
      expect(length).toBeLessThan((expected[i] as number) + 11 + REFRESH);
    });
    expect(MAX_TURN_GROWTH).toBe(32);
  });

  it('a lone client keeps the length its turns grew to across a pause, and stands aside as rarely after it', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 10);
    turnsHeld(turns, clock, 4); // turns of 1, 2, 4 and 8 × turnLength, each stand-aside unanswered
    clock.t += 10 * REFRESH;
    expect(turns.plan('L', request).kind).toBe('new');
    const [held] = turnsHeld(turns, clock, 1);
    expect(held).toBeGreaterThanOrEqual(16 * request.turnLengthMs);
  });

  it('a turn won after waiting for someone else is back to the call turn length', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 10);
    // Grow the turn: nobody takes the lock when it stands aside.
    for (let i = 0; i < 100; i++) cycle(turns, clock, 10);
    clock.t += REFRESH;
    const plan = turns.plan('L', request);
    turns.taken(plan, clock.t, true);
    clock.t += request.turnLengthMs + 1;
    turns.released('L');
    expect(turns.plan('L', request).kind).toBe('stands-aside');
  });

  it('a turn does not grow while this client waited for another holder within CONTENTION_MEMORY_IN_TURNS turns', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 10);
    turns.taken(turns.plan('L', request), clock.t, true); // won after waiting for someone else
    const contendedAt = clock.t;
    // Nobody takes the lock at any stand-aside from here on: a waiter's read may just have come late.
    const asides = standAsides(turns, clock, 12);
    const grown = asides.findIndex((aside) => aside.heldMs >= 2 * request.turnLengthMs);
    expect(grown).toBeGreaterThan(0);
    const memoryMs = CONTENTION_MEMORY_IN_TURNS * (request.turnLengthMs + REFRESH);
    const grewAt = (asides[grown - 1] as { takenAt: number }).takenAt;
    expect(grewAt - contendedAt).toBeGreaterThanOrEqual(memoryMs);
    expect(grewAt - contendedAt).toBeLessThan(memoryMs + request.turnLengthMs + REFRESH + 11);
  });

  it('a stand-aside answered by another holder does not grow the turn', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 10);
    cycle(turns, clock, 250);
    const aside = turns.plan('L', request);
    expect(aside.kind).toBe('stands-aside');
    clock.t += aside.standAsideMs;
    turns.taken(aside, clock.t + 50, true); // its read found someone else holding the lock
    clock.t += 50 + request.turnLengthMs + 1;
    turns.released('L');
    expect(turns.plan('L', request).kind).toBe('stands-aside');
  });
});

describe('Turns: memory', () => {
  it('remembers at most `capacity` locks, dropping the one taken longest ago', () => {
    const clock = manualClock();
    const turns = new Turns(clock, 2);
    for (const id of ['A', 'B', 'C']) turns.taken(turns.plan(id, request), clock.t, true);
    expect(turns.size).toBe(2);
    turns.released('A');
    expect(turns.plan('A', request).kind).toBe('new');
  });
});

describe('turnRequestOf', () => {
  const options = { refreshPeriod: REFRESH, turnLength: 2 * REFRESH, additionalTimeToWaitForLock: REFRESH };

  it('lets a call stand aside only when it may wait a refresh period, a single lock and a group alike', () => {
    expect(turnRequestOf(options)).toEqual(request);
    expect(turnRequestOf({ ...options, additionalTimeToWaitForLock: REFRESH - 1 }).mayWait).toBe(false);
    expect(turnRequestOf({ ...options, shouldSkipBlockingWait: true }).mayWait).toBe(false);
  });
});
