/**
 * Brings a fresh DynamoDB Local up to speed before the acquire benchmark
 * measures anything. On the bench machine a lone acquire/release loop ran
 * 49 cycles/s in the server's first 5 s of traffic and 81 after 20 s, so
 * whichever library ran first paid for both. In-process traffic of either
 * library, even 40 s of it, still left the first contention run of a
 * sitting the slowest for every variant; so the warm-up is that workload
 * itself: an unreported contention run of each library.
 */
import { VARIANTS, type LockSettings } from './acquire-clients.js';
import { benchContention, type ContentionShape } from './acquire-contention.js';

/** 8 worker processes on one key, as the contention shape the goals are most sensitive to. */
const WARM_UP_SHAPE: ContentionShape = { workers: 8, keys: 1, durationMs: 10_000 };

export const WARM_UP_DESCRIPTION = `one unreported run of ${WARM_UP_SHAPE.workers} workers on 1 key for ${WARM_UP_SHAPE.durationMs / 1000} s per library`;

export async function warmUpServer(endpoint: string, settings: LockSettings): Promise<void> {
  for (const variant of VARIANTS.filter(({ turnsOn }) => !turnsOn)) await benchContention(endpoint, variant, WARM_UP_SHAPE, settings);
}
