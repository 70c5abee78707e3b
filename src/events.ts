/**
 * A small typed event emitter. Listeners are isolated: one that throws is
 * reported to `onListenerError` and never stops the others or the caller
 * (the heartbeat scheduler emits from its tasks).
 */
export interface Subscription {
  /** Stops delivering events to this listener. Safe to call twice. */
  dispose(): void;
}

export class TypedEvents<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<(event: never) => void>>();

  constructor(private readonly onListenerError: (error: unknown, event: keyof Events) => void) {}

  on<Name extends keyof Events>(name: Name, listener: (event: Events[Name]) => void): Subscription {
    let set = this.#listeners.get(name);
    if (set === undefined) this.#listeners.set(name, (set = new Set()));
    const entry = listener as (event: never) => void;
    set.add(entry);
    return { dispose: () => set.delete(entry) };
  }

  emit<Name extends keyof Events>(name: Name, event: Events[Name]): void {
    const set = this.#listeners.get(name);
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        (listener as (event: Events[Name]) => void)(event);
      } catch (error) {
        this.onListenerError(error, name);
      }
    }
  }

  hasListeners(name: keyof Events): boolean {
    return (this.#listeners.get(name)?.size ?? 0) > 0;
  }
}
