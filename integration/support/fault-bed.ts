/**
 * Per-test setup of the heartbeat and withLock integration tests: a fresh
 * {@link LockTestBed} with its table before each test, and every proxied
 * DynamoDB client the test starts, all ended after it, also when it failed.
 */
import { afterEach, beforeEach } from '@jest/globals';
import { proxiedDynamoDB, type ProxiedDynamoDB, type ProxiedDynamoDBOptions } from './proxied-dynamodb.js';
import { LockTestBed } from './test-locks.js';

export interface FaultBed {
  /** The current test's bed. */
  readonly bed: LockTestBed;
  /** A DynamoDB client behind a fault proxy of its own, ended after the test. */
  proxied(identity: string, options?: ProxiedDynamoDBOptions): Promise<ProxiedDynamoDB>;
}

/** Registers the beforeEach/afterEach hooks; call it at the top of a test file. */
export function useFaultBed(tablePrefix: string): FaultBed {
  let current: LockTestBed | undefined;
  const networks: ProxiedDynamoDB[] = [];

  beforeEach(async () => {
    current = new LockTestBed(tablePrefix);
    await current.createTable();
  });

  afterEach(async () => {
    // Heal the network first, so that closing the lock clients can release what they still hold;
    // a request stuck on a blackholed connection fails at once instead of holding close() up.
    for (const network of networks) {
      network.proxy.passThrough();
      network.proxy.resetOpenConnections();
    }
    await current?.dispose();
    await Promise.all(networks.splice(0).map((network) => network.dispose()));
    current = undefined;
  });

  return {
    get bed(): LockTestBed {
      if (current === undefined) throw new Error('the fault bed exists only while a test runs');
      return current;
    },
    proxied: async (identity, options) => {
      const network = await proxiedDynamoDB(identity, options);
      networks.push(network);
      return network;
    },
  };
}
