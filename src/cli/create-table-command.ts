/** `dynamodb-lock create-table`: the lock table, on-demand unless told otherwise, waited for until ACTIVE. */
import { CREATE_TABLE_DEFAULTS } from '../settings/defaults.js';
import type { Command } from './command.js';
import { UsageError } from './usage-error.js';

const BILLING_MODES = Object.freeze({ 'on-demand': 'PAY_PER_REQUEST', provisioned: 'PROVISIONED' } as const);

export const createTableCommand: Command = {
  name: 'create-table',
  synopsis: '[--billing-mode on-demand|provisioned] [--read-capacity UNITS --write-capacity UNITS] [--if-not-exists]',
  summary: 'create the lock table and wait until it is active',
  description:
    'Creates the lock table with a string partition key (--partition-key-name, default "key") and, with\n' +
    '--sort-key-name, a string sort key, billed on demand unless --billing-mode provisioned, and waits\n' +
    'until it is ACTIVE. The same table serves the Java DynamoDB Lock Client.',
  flags: ['billing-mode', 'read-capacity', 'write-capacity', 'if-not-exists', 'json'],
  arguments: { min: 0, max: 0, names: '' },
  exitCodes: [],
  examples: [
    'dynamodb-lock create-table --table locks',
    'dynamodb-lock create-table --table locks --sort-key-name sortKey --if-not-exists',
    'dynamodb-lock create-table --table locks --billing-mode provisioned --read-capacity 5 --write-capacity 5',
  ],
  async run({ flags, io, connect, interrupted }) {
    const modeName = flags.string('billing-mode');
    if (modeName !== undefined && !(modeName in BILLING_MODES)) {
      throw new UsageError(`--billing-mode must be on-demand or provisioned, got ${JSON.stringify(modeName)}`);
    }
    const billingMode = modeName === undefined ? CREATE_TABLE_DEFAULTS.billingMode : BILLING_MODES[modeName as keyof typeof BILLING_MODES];
    const read = flags.count('read-capacity');
    const write = flags.count('write-capacity');
    const provisioned = billingMode === 'PROVISIONED';
    if (provisioned && (read === undefined || write === undefined)) {
      throw new UsageError('--billing-mode provisioned needs --read-capacity and --write-capacity');
    }
    if (!provisioned && (read !== undefined || write !== undefined)) {
      throw new UsageError('--read-capacity and --write-capacity need --billing-mode provisioned');
    }
    const connection = await connect({ createsTable: true });
    try {
      const { client, table } = connection;
      await client.createLockTable({
        billingMode,
        ...(provisioned ? { provisionedThroughput: { readCapacityUnits: read as number, writeCapacityUnits: write as number } } : {}),
        ifNotExists: flags.boolean('if-not-exists'),
        signal: interrupted,
      });
      if (flags.boolean('json')) {
        io.out(
          `${JSON.stringify({ tableName: table.tableName, partitionKeyName: table.partitionKeyName, sortKeyName: table.sortKeyName ?? null, billingMode, status: 'ACTIVE' })}\n`,
        );
      } else {
        const keys =
          table.sortKeyName === undefined
            ? `partition key "${table.partitionKeyName}"`
            : `partition key "${table.partitionKeyName}", sort key "${table.sortKeyName}"`;
        io.out(`Table ${JSON.stringify(table.tableName)} is ACTIVE (${keys}, ${billingModeName(billingMode)}).\n`);
      }
      return 0;
    } finally {
      await connection.close();
    }
  },
};

/** The flag's word for a billing mode: `on-demand`, `provisioned`. */
function billingModeName(billingMode: string): string {
  return Object.entries(BILLING_MODES).find(([, mode]) => mode === billingMode)?.[0] ?? billingMode;
}
