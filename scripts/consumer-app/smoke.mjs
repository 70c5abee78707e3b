// Run by integration/package.test.ts with the packed package installed: it
// must load from ESM (`import`) and do real work against DynamoDB Local.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient } from 'dynamodb-lock';
import { LockClientInstrumentation } from 'dynamodb-lock/opentelemetry';
import { run } from './smoke-body.cjs';

console.log(JSON.stringify(await run({ DynamoDBClient, LockClient, LockClientInstrumentation }, 'esm')));
