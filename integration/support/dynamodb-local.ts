/**
 * The embedded DynamoDB Local moved to src/cli/dynamodb-local.ts, because the
 * published CLI's `--local` needs it; tests, the demo and benchmarks keep
 * importing it from here.
 */
export * from '../../src/cli/dynamodb-local.js';
