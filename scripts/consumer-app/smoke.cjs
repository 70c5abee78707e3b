// The same from CommonJS: `require` of the ESM-only package (require(esm)).
const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');
const { LockClient } = require('dynamodb-lock');
const { run } = require('./smoke-body.cjs');

run({ DynamoDBClient, LockClient }, 'cjs').then(
  (result) => console.log(JSON.stringify(result)),
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
