/**
 * DeadlineHeap: a min-heap on `dueAt` whose entries track their own index.
 * Checked against a plain reference model under seeded random operations.
 */
import { describe, expect, it } from '@jest/globals';
import { DeadlineHeap, type HeapEntry } from '../../src/heartbeat/deadline-heap.js';
import { seededRandom as prng } from '../../chaos/random.js';

interface Entry extends HeapEntry {
  readonly name: string;
}

function entry(name: string): Entry {
  return { name, dueAt: Number.NaN, heapIndex: -1 };
}

/**
 * Checks everything observable about the heap against the reference set of
 * members: size, peek, has(), that the heap indexes are exactly 0..n-1, and
 * the heap property via those indexes (parent.dueAt <= child.dueAt).
 */
function checkAgainstModel(heap: DeadlineHeap<Entry>, members: ReadonlySet<Entry>, outsiders: readonly Entry[]): void {
  // Plain checks rather than expect() here: this runs after every one of thousands of operations.
  const fail = (message: string): never => {
    throw new Error(message);
  };
  if (heap.size !== members.size) fail(`size ${heap.size}, model has ${members.size}`);
  const byIndex: Entry[] = [];
  for (const e of members) {
    if (!heap.has(e)) fail(`${e.name} should be in the heap`);
    if (!Number.isInteger(e.heapIndex) || e.heapIndex < 0 || e.heapIndex >= members.size) {
      fail(`${e.name} has heapIndex ${e.heapIndex} with ${members.size} members`);
    }
    if (byIndex[e.heapIndex] !== undefined) fail(`two entries claim index ${e.heapIndex}`);
    byIndex[e.heapIndex] = e;
  }
  for (let i = 1; i < byIndex.length; i++) {
    const child = byIndex[i] as Entry;
    const parent = byIndex[(i - 1) >> 1] as Entry;
    if (!(parent.dueAt <= child.dueAt)) fail(`heap property broken at ${i}: parent ${parent.dueAt} > child ${child.dueAt}`);
  }
  for (const e of outsiders) {
    if (members.has(e)) continue;
    if (e.heapIndex !== -1) fail(`${e.name} is out of the heap but has heapIndex ${e.heapIndex}`);
    if (heap.has(e)) fail(`${e.name} is out of the heap but has() says it is in`);
  }
  const top = heap.peek();
  if (members.size === 0) {
    if (top !== undefined) fail('peek() of an empty heap should be undefined');
  } else {
    let min = Infinity;
    for (const e of members) if (e.dueAt < min) min = e.dueAt;
    if (top === undefined || !members.has(top) || top.dueAt !== min) fail(`peek() gave ${top?.dueAt}, minimum is ${min}`);
  }
}

describe('DeadlineHeap', () => {
  it('starts empty', () => {
    const heap = new DeadlineHeap<Entry>();
    expect(heap.size).toBe(0);
    expect(heap.peek()).toBeUndefined();
    expect(heap.pop()).toBeUndefined();
  });

  it('pops entries in dueAt order whatever the insertion order', () => {
    const heap = new DeadlineHeap<Entry>();
    const dues = [50, 10, 40, 30, 20, 60, 0, 35];
    for (const [i, due] of dues.entries()) heap.upsert(entry(`e${i}`), due);
    const popped: number[] = [];
    for (let e = heap.pop(); e !== undefined; e = heap.pop()) {
      expect(e.heapIndex).toBe(-1);
      popped.push(e.dueAt);
    }
    expect(popped).toEqual([...dues].sort((a, b) => a - b));
    expect(heap.size).toBe(0);
  });

  it('orders Infinity after every finite deadline and keeps ties', () => {
    const heap = new DeadlineHeap<Entry>();
    heap.upsert(entry('inf'), Infinity);
    heap.upsert(entry('a'), 5);
    heap.upsert(entry('b'), 5);
    heap.upsert(entry('c'), -3);
    expect([heap.pop()?.dueAt, heap.pop()?.dueAt, heap.pop()?.dueAt, heap.pop()?.name]).toEqual([-3, 5, 5, 'inf']);
  });

  it('maintains heapIndex: a valid position while in, -1 after remove/pop/clear', () => {
    const heap = new DeadlineHeap<Entry>();
    const a = entry('a');
    const b = entry('b');
    const c = entry('c');
    expect(heap.has(a)).toBe(false);
    heap.upsert(a, 3);
    heap.upsert(b, 1);
    heap.upsert(c, 2);
    checkAgainstModel(heap, new Set([a, b, c]), []);

    heap.remove(c);
    expect(c.heapIndex).toBe(-1);
    expect(heap.has(c)).toBe(false);
    checkAgainstModel(heap, new Set([a, b]), [c]);

    expect(heap.pop()).toBe(b);
    expect(b.heapIndex).toBe(-1);
    checkAgainstModel(heap, new Set([a]), [b, c]);

    heap.upsert(b, 0);
    heap.upsert(c, 9);
    heap.clear();
    checkAgainstModel(heap, new Set(), [a, b, c]);
    expect(heap.pop()).toBeUndefined();
  });

  it('removing the last entry, the only entry, or the root keeps the heap consistent', () => {
    const heap = new DeadlineHeap<Entry>();
    const only = entry('only');
    heap.upsert(only, 1);
    heap.remove(only);
    checkAgainstModel(heap, new Set(), [only]);

    const es = Array.from({ length: 7 }, (_, i) => entry(`e${i}`));
    es.forEach((e, i) => heap.upsert(e, i));
    const members = new Set(es);
    const last = es.find((e) => e.heapIndex === es.length - 1) as Entry;
    heap.remove(last);
    members.delete(last);
    checkAgainstModel(heap, members, es);
    const root = heap.peek() as Entry;
    heap.remove(root);
    members.delete(root);
    checkAgainstModel(heap, members, es);
  });

  it('remove of a non-member is a no-op, even when its stale index points at another entry', () => {
    const heap = new DeadlineHeap<Entry>();
    const a = entry('a');
    const b = entry('b');
    heap.upsert(a, 1);
    heap.upsert(b, 2);
    const stranger = entry('stranger');
    heap.remove(stranger);
    checkAgainstModel(heap, new Set([a, b]), [stranger]);

    // An entry that belongs to another heap has an index that is valid here, but is not ours.
    const other = new DeadlineHeap<Entry>();
    const foreign = entry('foreign');
    other.upsert(foreign, 0);
    expect(foreign.heapIndex).toBe(0);
    expect(heap.has(foreign)).toBe(false);
    heap.remove(foreign);
    checkAgainstModel(heap, new Set([a, b]), []);
    expect(foreign.heapIndex).toBe(0);
    expect(other.has(foreign)).toBe(true);

    // Removing twice is harmless.
    heap.remove(a);
    heap.remove(a);
    checkAgainstModel(heap, new Set([b]), [a]);
  });

  it('upsert moves a member earlier (to the top) or later (below others) without duplicating it', () => {
    const heap = new DeadlineHeap<Entry>();
    const es = Array.from({ length: 10 }, (_, i) => entry(`e${i}`));
    es.forEach((e, i) => heap.upsert(e, (i + 1) * 10));
    const members = new Set(es);

    const late = es[9] as Entry;
    heap.upsert(late, 5);
    expect(heap.size).toBe(10);
    expect(heap.peek()).toBe(late);
    checkAgainstModel(heap, members, []);

    heap.upsert(late, 1000);
    expect(heap.size).toBe(10);
    expect(heap.peek()).toBe(es[0]);
    checkAgainstModel(heap, members, []);

    const first = es[0] as Entry;
    heap.upsert(first, 55);
    checkAgainstModel(heap, members, []);
    expect(heap.peek()).toBe(es[1]);

    // Same deadline again: nothing moves, nothing breaks.
    heap.upsert(first, 55);
    checkAgainstModel(heap, members, []);

    const order: string[] = [];
    for (let e = heap.pop(); e !== undefined; e = heap.pop()) order.push(e.name);
    expect(order).toEqual(['e1', 'e2', 'e3', 'e4', 'e0', 'e5', 'e6', 'e7', 'e8', 'e9']);
  });

  it('a removed entry can be inserted again', () => {
    const heap = new DeadlineHeap<Entry>();
    const a = entry('a');
    const b = entry('b');
    heap.upsert(a, 1);
    heap.upsert(b, 2);
    heap.remove(a);
    heap.upsert(a, 3);
    checkAgainstModel(heap, new Set([a, b]), []);
    expect(heap.pop()).toBe(b);
    expect(heap.pop()).toBe(a);
  });

  it.each([7, 99, 512])('countDueBefore counts the entries due before a time, up to a cap (seed %i)', (seed) => {
    const random = prng(seed);
    for (let round = 0; round < 200; round++) {
      const heap = new DeadlineHeap<Entry>();
      const dues = Array.from({ length: Math.floor(random() * 80) }, () => Math.floor(random() * 100));
      dues.forEach((due, i) => heap.upsert(entry(`e${i}`), due));
      const time = Math.floor(random() * 110);
      const atMost = 1 + Math.floor(random() * 30);
      const due = dues.filter((d) => d < time).length;
      expect(heap.countDueBefore(time, atMost)).toBe(Math.min(due, atMost));
    }
  });

  it('countDueBefore looks at a few entries per one counted, however large the heap', () => {
    const heap = new DeadlineHeap<Entry>();
    let reads = 0;
    for (let i = 0; i < 10_000; i++) {
      let dueAt = Number.NaN;
      const counted: Entry = {
        name: `e${i}`,
        heapIndex: -1,
        get dueAt() {
          reads++;
          return dueAt;
        },
        set dueAt(value: number) {
          dueAt = value;
        },
      };
      heap.upsert(counted, i % 100);
    }
    reads = 0;
    expect(heap.countDueBefore(1_000, 25)).toBe(25);
    // Each entry counted puts its two children in line to be looked at.
    expect(reads).toBeLessThanOrEqual(2 * 25 + 1);
  });

  it.each([1, 2, 3, 42, 2024])('agrees with a reference model under random push/remove/upsert/pop (seed %i)', (seed) => {
    const random = prng(seed);
    const heap = new DeadlineHeap<Entry>();
    const pool = Array.from({ length: 60 }, (_, i) => entry(`e${i}`));
    const members = new Set<Entry>();
    const pick = (): Entry => pool[Math.floor(random() * pool.length)] as Entry;
    // Narrow range so ties are common; Infinity now and then.
    const due = (): number => (random() < 0.05 ? Infinity : Math.floor(random() * 50));

    for (let op = 0; op < 3000; op++) {
      const r = random();
      const e = pick();
      if (r < 0.35) {
        // upsert: insert a non-member or move a member
        const d = due();
        heap.upsert(e, d);
        members.add(e);
        expect(e.dueAt).toBe(d);
      } else if (r < 0.6) {
        // remove (of a member or, as often as not, a non-member)
        heap.remove(e);
        members.delete(e);
        expect(e.heapIndex).toBe(-1);
      } else if (r < 0.8) {
        const popped = heap.pop();
        if (members.size === 0) {
          expect(popped).toBeUndefined();
        } else {
          const min = Math.min(...[...members].map((m) => m.dueAt));
          expect(popped).toBeDefined();
          expect(popped?.dueAt).toBe(min);
          expect(members.has(popped as Entry)).toBe(true);
          members.delete(popped as Entry);
          expect(popped?.heapIndex).toBe(-1);
        }
      } else if (r < 0.99) {
        // move a current member specifically, earlier or later
        const list = [...members];
        const m = list[Math.floor(random() * list.length)];
        if (m !== undefined) heap.upsert(m, random() < 0.5 ? m.dueAt - Math.floor(random() * 20) : m.dueAt + Math.floor(random() * 20));
      } else {
        heap.clear();
        members.clear();
      }
      checkAgainstModel(heap, members, pool);
    }

    // Drain: every member comes out once, in non-decreasing order.
    const expected = [...members].map((m) => m.dueAt).sort((a, b) => a - b);
    const drained: number[] = [];
    const seen = new Set<Entry>();
    for (let e = heap.pop(); e !== undefined; e = heap.pop()) {
      expect(seen.has(e)).toBe(false);
      seen.add(e);
      drained.push(e.dueAt);
    }
    expect(drained).toEqual(expected);
    expect(seen).toEqual(members);
  });
});
