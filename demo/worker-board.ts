/**
 * What the demo knows about each worker, from the events the workers report:
 * who leads, who waits, who was killed, and the leader's heartbeats. It
 * turns each event into a line of text and the whole into a status line.
 */
import type { CandidateEvent } from '../test-kit/election-candidates.js';

type WorkerState = 'starting' | 'waiting' | 'leading' | 'resigned' | 'killed' | 'stopped';

const short = (rvn: string | undefined): string => (rvn === undefined ? '?' : `${rvn.slice(0, 8)}…`);

export class WorkerBoard {
  readonly #states = new Map<string, WorkerState>();
  readonly #addresses = new Map<string, string>();
  #heartbeats = 0;
  #terms = 0;

  constructor(workers: ReadonlyMap<string, string>) {
    for (const [name, address] of workers) {
      this.#states.set(name, 'starting');
      this.#addresses.set(name, address);
    }
  }

  address(name: string): string {
    return this.#addresses.get(name) ?? '?';
  }

  /** Updates the board; returns the line to show, or undefined for events not worth a line. */
  apply(event: CandidateEvent): string | undefined {
    switch (event.event) {
      case 'campaigning':
        this.#states.set(event.name, 'waiting');
        return `campaigns (pid ${event.pid}, address ${this.address(event.name)})`;
      case 'leader':
        this.#states.set(event.name, 'leading');
        this.#heartbeats = 0;
        this.#terms++;
        return `★ LEADS: it won the lock (RVN ${short(event.rvn)}); term ${this.#terms}`;
      case 'heartbeat':
        this.#heartbeats++;
        return `♥ heartbeat ${this.#heartbeats}: RVN is now ${short(event.rvn)}`;
      case 'lost':
        this.#states.set(event.name, 'waiting');
        return `lost leadership: ${event.reason ?? 'unknown reason'}`;
      case 'resigned':
        this.#states.set(event.name, 'resigned');
        return 'resigned: deleted the lock item, so a waiting worker can take it now';
      case 'stopped':
        if (this.#states.get(event.name) !== 'killed') this.#states.set(event.name, 'stopped');
        return 'stopped';
      case 'error':
        return `error: ${event.message ?? '?'}`;
      case 'leading':
        return undefined;
    }
  }

  killed(name: string): void {
    this.#states.set(name, 'killed');
  }

  status(): string {
    const leader = [...this.#states].find(([, state]) => state === 'leading')?.[0];
    const others = [...this.#states].filter(([name]) => name !== leader).map(([name, state]) => `${name} ${state}`);
    const beats = `${this.#heartbeats} heartbeat${this.#heartbeats === 1 ? '' : 's'}`;
    const leading = leader === undefined ? 'no leader' : `leader ${leader} (${this.address(leader)}), ${beats}`;
    return `${leading} · ${others.join(' · ')}`;
  }
}
