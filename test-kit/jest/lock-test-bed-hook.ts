/**
 * The per-test setup most integration files share: a fresh
 * {@link LockTestBed} with its table before each test, disposed after it,
 * also when the test failed.
 */
import { afterEach, beforeEach } from '@jest/globals';
import { LockTestBed } from '../test-locks.js';

/**
 * Registers the hooks; call it at the top of a test file. The result stands
 * for the bed of whichever test is running, so a file uses it like a bed of
 * its own (`bed.client(...)`); outside a test it throws.
 */
export function useLockTestBed(tablePrefix: string, keys?: ConstructorParameters<typeof LockTestBed>[1]): LockTestBed {
  let current: LockTestBed | undefined;

  beforeEach(async () => {
    current = new LockTestBed(tablePrefix, keys);
    await current.createTable();
  });

  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });

  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- only the Proxy's target: every read goes to the current bed
  return new Proxy({} as LockTestBed, {
    get(_, property) {
      if (current === undefined) throw new Error(`the ${tablePrefix} test bed exists only while a test runs`);
      const value: unknown = Reflect.get(current, property, current);
      // Methods use the bed's private fields, so they must run on the bed itself, not on this stand-in.
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(current) : value;
    },
  });
}
