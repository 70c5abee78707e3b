/**
 * Per-test setup of the heartbeat and withLock integration tests: a fresh
 * {@link LockTestBed} with its table before each test, and every proxied
 * DynamoDB client the test starts, all ended after it, also when it failed.
 */
import { afterEach } from '@jest/globals';
import { proxiedDynamoDB, type ProxiedDynamoDB, type ProxiedDynamoDBOptions } from '../proxied-dynamodb.js';
import { useLockTestBed } from './lock-test-bed-hook.js';
import type { LockTestBed } from '../test-locks.js';

export interface FaultBed {
  /** Stands for the running test's bed (see useLockTestBed). */
  readonly bed: LockTestBed;
  /** A DynamoDB client behind a fault proxy of its own, ended after the test. */
  proxied(identity: string, options?: ProxiedDynamoDBOptions): Promise<ProxiedDynamoDB>;
}

/** Registers the beforeEach/afterEach hooks; call it at the top of a test file. */
export function useFaultBed(tablePrefix: string, keys?: Parameters<typeof useLockTestBed>[1]): FaultBed {
  const networks: ProxiedDynamoDB[] = [];

  // Jest runs afterEach hooks in the order they are registered: heal the network first, so that
  // closing the lock clients (the bed's own afterEach, next) can release what they still hold; a
  // request stuck on a blackholed connection fails at once instead of holding close() up.
  afterEach(() => {
    for (const network of networks) {
      network.proxy.passThrough();
      network.proxy.resetOpenConnections();
    }
  });
  const bed = useLockTestBed(tablePrefix, keys);
  afterEach(async () => {
    await Promise.all(networks.splice(0).map((network) => network.dispose()));
  });

  return {
    bed,
    proxied: async (identity, options) => {
      const network = await proxiedDynamoDB(identity, options);
      networks.push(network);
      return network;
    },
  };
}
