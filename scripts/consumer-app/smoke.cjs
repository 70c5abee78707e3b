// The same from CommonJS: `require` of the ESM-only package (require(esm)).
const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');
const { LockClient } = require('dynamodb-lock');
const { LockClientInstrumentation } = require('dynamodb-lock/opentelemetry');
const { run } = require('./smoke-body.cjs');

run({ DynamoDBClient, LockClient, LockClientInstrumentation }, 'cjs').then(
  (result) => console.log(JSON.stringify(result)),
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
