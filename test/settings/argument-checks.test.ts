import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { checkFunction, checkSignal } from '../../src/settings/argument-checks.js';
import { thrownBy } from '../../test-kit/jest/lock-events.js';

describe('checkSignal and checkFunction', () => {
  it('accept an AbortSignal, undefined and a function; refuse anything else with a typed error that names what came', () => {
    const signal = new AbortController().signal;
    expect(checkSignal('signal', signal)).toBe(signal);
    expect(checkSignal('signal', AbortSignal.timeout(1_000))).toBeDefined();
    expect(checkSignal('signal', undefined)).toBeUndefined();
    expect(() => checkFunction('lead: routine', () => undefined)).not.toThrow();

    const refusals: Array<[() => unknown, string]> = [
      [() => checkSignal('signal', new AbortController()), 'signal must be an AbortSignal (pass its .signal), got an object (AbortController)'],
      [() => checkSignal('signal', 'stop'), 'signal must be an AbortSignal, got "stop"'],
      [() => checkSignal('signal', null), 'signal must be an AbortSignal, got null'],
      [() => checkSignal('signal', Object.create(null)), 'signal must be an AbortSignal, got an object'],
      [() => checkFunction('withLock: routine', 42), 'withLock: routine must be a function, got 42'],
      [() => checkFunction('withLock: routine', { run: () => undefined }), 'withLock: routine must be a function, got an object (Object)'],
    ];
    for (const [refuse, message] of refusals) {
      const error = thrownBy(refuse);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ code: 'INVALID_OPTION', message });
    }
  });
});
