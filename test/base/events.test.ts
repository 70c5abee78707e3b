/** TypedEvents: the emitter behind the client's `lost`, `endangered`, `heartbeat` and `heartbeatError` events. */
import { describe, expect, it, jest } from '@jest/globals';
import { TypedEvents } from '../../src/base/events.js';

interface Events {
  tick: number;
  other: string;
}

function newEvents(): { events: TypedEvents<Events>; listenerErrors: unknown[] } {
  const listenerErrors: unknown[] = [];
  return { events: new TypedEvents<Events>((error) => listenerErrors.push(error)), listenerErrors };
}

describe('TypedEvents', () => {
  it('delivers an event to every listener of its name, in subscription order, and to no other', () => {
    const { events } = newEvents();
    const seen: string[] = [];
    events.on('tick', (n) => seen.push(`a${n}`));
    events.on('tick', (n) => seen.push(`b${n}`));
    events.on('other', (s) => seen.push(`other ${s}`));
    events.emit('tick', 1);
    expect(seen).toEqual(['a1', 'b1']);
  });

  it('a subscription is Disposable: `using` unsubscribes at the end of the block', () => {
    const { events } = newEvents();
    const seen: number[] = [];
    {
      using subscription = events.on('tick', (n) => seen.push(n));
      expect(typeof subscription[Symbol.dispose]).toBe('function');
      events.emit('tick', 1);
    }
    events.emit('tick', 2);
    expect(seen).toEqual([1]);
    expect(events.hasListeners('tick')).toBe(false);
  });

  it('a listener that throws is reported and does not stop the others or the emitter', () => {
    const { events, listenerErrors } = newEvents();
    const boom = new Error('boom');
    const after = jest.fn();
    events.on('tick', () => {
      throw boom;
    });
    events.on('tick', after);
    expect(() => events.emit('tick', 1)).not.toThrow();
    expect(after).toHaveBeenCalledWith(1);
    expect(listenerErrors).toEqual([boom]);
  });

  it('a listener added while an event is delivered gets the next event, not that one', () => {
    const { events } = newEvents();
    const late = jest.fn();
    events.on('tick', () => {
      events.on('tick', late);
    });
    events.emit('tick', 1);
    expect(late).not.toHaveBeenCalled();
    events.emit('tick', 2);
    expect(late).toHaveBeenCalledWith(2);
  });

  it('a listener disposed while an event is delivered still gets that event, and no later one', () => {
    const { events } = newEvents();
    const second = jest.fn();
    let subscription = { dispose: (): void => undefined };
    events.on('tick', () => subscription.dispose());
    subscription = events.on('tick', second);
    events.emit('tick', 1);
    events.emit('tick', 2);
    expect(second.mock.calls).toEqual([[1]]);
  });

  it('disposing twice is harmless, and a function subscribed twice is called twice until one subscription ends', () => {
    const { events } = newEvents();
    const listener = jest.fn();
    const first = events.on('tick', listener);
    events.on('tick', listener);
    events.emit('tick', 1);
    expect(listener).toHaveBeenCalledTimes(2);
    first.dispose();
    first.dispose();
    events.emit('tick', 2);
    expect(listener).toHaveBeenCalledTimes(3);
    expect(events.hasListeners('tick')).toBe(true);
  });

  it('hasListeners is false once every listener of a name is gone', () => {
    const { events } = newEvents();
    expect(events.hasListeners('tick')).toBe(false);
    const subscription = events.on('tick', () => undefined);
    expect(events.hasListeners('tick')).toBe(true);
    subscription.dispose();
    expect(events.hasListeners('tick')).toBe(false);
  });
});
