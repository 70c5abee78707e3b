/**
 * Brings a fresh DynamoDB Local up to speed before the acquire benchmark
 * measures anything. On the bench machine a lone acquire/release loop ran
 * 49 cycles/s in the server's first 5 s of traffic and 81 after 20 s, once
 * its JVM had compiled the paths, so whichever library ran first paid for
 * both. Both libraries drive it here, turn and turn about, each with two
 * clients on one key so that refused conditional writes and reads warm too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CLIENTS, openClient, type BenchLockClient, type LockSettings } from './acquire-clients.js';

/** Long enough for the lone-loop rate of both libraries to stop rising on the bench machine. */
export const WARM_UP_MS = 20_000;
/** Each library's share, in turn, so that neither ends the warm-up alone. */
const SLICE_MS = 1_000;
const CLIENTS_PER_LIBRARY = 2;
/** As the contention workers' critical section. */
const SECTION_MS = 5;
/** Nobody holds a warm-up lock longer than a section: a wait this long means something is broken. */
const STUCK_MS = 30_000;

export async function warmUpServer(endpoint: string, settings: LockSettings, durationMs = WARM_UP_MS): Promise<void> {
  const libraries = CLIENTS.map((name) =>
    Array.from({ length: CLIENTS_PER_LIBRARY }, (_, i) => openClient(name, endpoint, settings, `warm-up-${name}-${i}`)),
  );
  try {
    // A slice ends when its last waiter is through, so slices run over; the whole warm-up keeps to its time.
    const end = performance.now() + durationMs;
    for (let slice = 0; performance.now() < end; slice++) {
      const clients = libraries[slice % libraries.length] ?? [];
      const until = Math.min(end, performance.now() + SLICE_MS);
      await Promise.all(clients.map((client) => cyclesUntil(client, `warm-up-${client.name}`, until)));
    }
  } finally {
    await Promise.all(libraries.flat().map((client) => client.close()));
  }
}

async function cyclesUntil(client: BenchLockClient, key: string, until: number): Promise<void> {
  while (performance.now() < until) {
    const lock = await client.acquire(key, AbortSignal.timeout(STUCK_MS));
    await sleep(SECTION_MS);
    await lock.release();
  }
}
