/**
 * Every acquisition request has a bound: one that goes unanswered this long
 * is abandoned, so that it frees its gate slot even when its call waits
 * without a deadline (elections, `additionalTimeToWaitForLock: Infinity`).
 * An abandoned write may still have been applied: the caller treats it as a
 * write whose reply was lost (read before deciding).
 */
import { boundedSignal } from '../primitives/bounded-signal.js';
import type { AcquisitionGate, GateLane } from './acquisition-gate.js';

/** What a request abandoned at its bound rejects with, made from the bound's `TimeoutError`. */
export type Abandonment = (timeout: DOMException) => unknown;

/**
 * Runs `request` with a signal that follows `signal` and aborts once `boundMs`
 * pass without an answer; it then rejects with `abandoned(timeout)` (by
 * default the `TimeoutError` itself).
 */
export async function withinBound<T>(
  boundMs: number,
  signal: AbortSignal | undefined,
  request: (signal: AbortSignal) => Promise<T>,
  abandoned: Abandonment = (timeout) => timeout,
): Promise<T> {
  const bound = boundedSignal(boundMs, signal);
  try {
    return await request(bound.signal);
  } catch (error) {
    // The SDK rejects with an error of its own on abort; what ended the request is the bound.
    const { timeout } = bound;
    throw timeout === undefined ? error : abandoned(timeout);
  } finally {
    bound.dispose();
  }
}

/**
 * Runs `request` once `gate` lets it through (heartbeats first, a bounded
 * number in flight), within `boundMs`: how polls, reads and listings,
 * which only look at locks, are sent.
 */
export function admittedWithinBound<T>(
  gate: AcquisitionGate,
  boundMs: number,
  signal: AbortSignal | undefined,
  request: (signal: AbortSignal) => Promise<T>,
  options: { readonly lane?: GateLane; readonly abandoned?: Abandonment } = {},
): Promise<T> {
  return gate.run(() => withinBound(boundMs, signal, request, options.abandoned), signal, options.lane);
}

/** What of an acquisition's deadline (acquire-deadline.ts) its requests follow. */
export interface CallDeadline {
  /** The call waits to be admitted: its wait stands still. */
  pause(): void;
  resume(): void;
  readonly requestSignal: AbortSignal;
  /** Runs one request within `boundMs`, following the call's cut-off. */
  withinBound<T>(boundMs: number, request: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/**
 * Runs a request of an acquisition call once `gate` lets it through in
 * `lane`, within `boundMs` (kept by the call's deadline). The wait to be
 * admitted counts against the call's deadline only while the queue stands
 * still (acquire-deadline.ts); the request follows the call's cut-off.
 */
export async function admittedForCall<T>(
  gate: AcquisitionGate,
  deadline: CallDeadline,
  boundMs: number,
  request: (signal: AbortSignal) => Promise<T>,
  lane: GateLane = 'acquisition',
): Promise<T> {
  deadline.pause();
  try {
    return await gate.run(
      () => {
        deadline.resume();
        return deadline.withinBound(boundMs, request);
      },
      deadline.requestSignal,
      lane,
    );
  } finally {
    // A request refused without waiting (a renewal beyond its limit) leaves the call going on: its time runs again.
    deadline.resume();
  }
}
