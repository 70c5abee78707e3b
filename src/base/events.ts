/**
 * A small typed event emitter. Listeners are isolated: one that throws is
 * reported to `onListenerError` and never stops the others or the caller
 * (the heartbeat scheduler emits from its tasks).
 */
export interface Subscription extends Disposable {
  /** Stops delivering events to this listener. Safe to call twice. */
  dispose(): void;
  /** The same as `dispose()`, for `using subscription = client.on(…)`. */
  [Symbol.dispose](): void;
}

export class TypedEvents<Events extends object> {
  /**
   * Replaced, never changed in place, when a listener comes or goes: an emit
   * iterates the array it started with (a listener added during an emit
   * misses that event) without copying it on every event.
   */
  readonly #listeners = new Map<keyof Events, readonly ((event: never) => void)[]>();

  constructor(private readonly onListenerError: (error: unknown, event: keyof Events) => void) {}

  on<Name extends keyof Events>(name: Name, listener: (event: Events[Name]) => void): Subscription {
    const entry = listener as (event: never) => void;
    this.#listeners.set(name, [...(this.#listeners.get(name) ?? []), entry]);
    let subscribed = true;
    const subscription: Subscription = {
      dispose: () => {
        if (!subscribed) return;
        subscribed = false;
        // One subscription, one entry: the same function subscribed twice stays subscribed once.
        const remaining = [...(this.#listeners.get(name) ?? [])];
        remaining.splice(remaining.indexOf(entry), 1);
        if (remaining.length === 0) this.#listeners.delete(name);
        else this.#listeners.set(name, remaining);
      },
      [Symbol.dispose]: () => subscription.dispose(),
    };
    return subscription;
  }

  emit<Name extends keyof Events>(name: Name, event: Events[Name]): void {
    const listeners = this.#listeners.get(name);
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        (listener as (event: Events[Name]) => void)(event);
      } catch (error) {
        this.onListenerError(error, name);
      }
    }
  }

  hasListeners(name: keyof Events): boolean {
    return this.#listeners.has(name);
  }
}
