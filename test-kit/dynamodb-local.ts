/**
 * The DynamoDB Local of the tests, the demo and the benchmarks is the one
 * users get from `dynamodb-lock/testing`.
 */
export * from '../src/testing/index.js';
