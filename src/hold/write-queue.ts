/**
 * A held lock's write queue: its writes (heartbeats, a release, a guarded
 * write) run one at a time, in the order they were queued, so that each
 * conditions on the RVN the previous one wrote. A release may cut off the
 * wait for a write in flight rather than queue behind a stuck heartbeat.
 * A queue lives only while a write is queued: most locks are idle most of
 * the time, and keep none.
 */

/** The next write waits for the previous one to settle, whatever its outcome (its caller sees that). */
const ignore = (): void => undefined;
/** Where the first write of an idle lock waits: it still starts on a later tick, as it would behind another write. */
const IDLE: Promise<unknown> = Promise.resolve();

export class WriteQueue {
  readonly #onIdle: () => void;
  /** The last write queued. */
  #tail: Promise<unknown> = IDLE;
  #writes = 0;
  /** Stops waiting for the write in flight, if any. */
  #cutOff: (() => void) | undefined;

  /** `onIdle`: told once the last write queued has settled; the queue is then done with. */
  constructor(onIdle: () => void) {
    this.#onIdle = onIdle;
  }

  /** Runs `write` once every write queued before it has settled. */
  run<T>(write: () => Promise<T>): Promise<T> {
    this.#writes++;
    const result = this.#tail.then(async () => {
      try {
        return await write();
      } finally {
        // The write has updated the lock (RVN, lease) before this point, so a write queued from
        // now on may start at once, in a new queue.
        if (--this.#writes === 0) this.#onIdle();
      }
    });
    this.#tail = result.catch(ignore);
    return result;
  }

  /** Waits for `sending`, unless {@link cutOff} is called meanwhile. */
  async unlessCutOff<T>(sending: Promise<T>, reason: () => unknown): Promise<T> {
    try {
      return await new Promise<T>((resolve, reject) => {
        this.#cutOff = () => reject(reason());
        sending.then(resolve, reject);
      });
    } finally {
      this.#cutOff = undefined;
    }
  }

  /** Stops waiting for the write in flight, if any: its outcome is then unknown. */
  cutOff(): void {
    this.#cutOff?.();
  }
}
