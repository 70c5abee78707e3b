/**
 * A small seeded PRNG (mulberry32): the chaos run's choices (faults, victims,
 * keys, pauses) repeat for a seed. Process scheduling does not, so a seed
 * reproduces the schedule of decisions, not the exact interleaving.
 */
export type Random = () => number;

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A whole number in [min, max]. */
export function between(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

/** `count` different items, in random order. */
export function sample<T>(random: Random, items: readonly T[], count: number): T[] {
  const left = [...items];
  const chosen: T[] = [];
  while (chosen.length < count && left.length > 0) chosen.push(...left.splice(Math.floor(random() * left.length), 1));
  return chosen;
}
