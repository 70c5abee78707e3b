/**
 * The DynamoDB operation a command performs, the `rpc.method` of a call. Not
 * read from the class's `name`: minifying bundlers rename classes
 * (`PutItemCommand` becomes something like `xf` in an esbuild --minify
 * bundle), and a command carries its operation name only inside the SDK's
 * middleware stack. So the commands the lock client sends are known by
 * class; those are the application's own SDK classes (a peer dependency).
 */
import {
  BatchExecuteStatementCommand,
  CreateTableCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';

const OPERATIONS: ReadonlyMap<unknown, string> = new Map<unknown, string>([
  [BatchExecuteStatementCommand, 'BatchExecuteStatement'],
  [CreateTableCommand, 'CreateTable'],
  [DeleteItemCommand, 'DeleteItem'],
  [DescribeTableCommand, 'DescribeTable'],
  [GetItemCommand, 'GetItem'],
  [ListTablesCommand, 'ListTables'],
  [PutItemCommand, 'PutItem'],
  [QueryCommand, 'Query'],
  [ScanCommand, 'Scan'],
  [TransactWriteItemsCommand, 'TransactWriteItems'],
  [UpdateItemCommand, 'UpdateItem'],
]);

/** What OpenTelemetry's semantic conventions name a value they cannot tell. */
const OTHER = '_OTHER';

/**
 * `PutItem` for a `PutItemCommand`. Another command sent through the wrapped
 * client is named by its class while the class still ends in `Command`, and
 * `_OTHER` once a bundler renamed it.
 */
export function operationOf(command: object): string {
  const known = OPERATIONS.get(command.constructor);
  if (known !== undefined) return known;
  const className = command.constructor.name;
  return className.endsWith('Command') && className.length > 'Command'.length ? className.slice(0, -'Command'.length) : OTHER;
}
