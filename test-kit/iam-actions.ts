/**
 * Records the IAM actions a DynamoDB client's calls need, per table, with a
 * middleware on the client's own stack: `GetItem` needs `dynamodb:GetItem`;
 * a PartiQL batch needs `dynamodb:PartiQL<Insert|Update|Delete|Select>` per
 * statement kind; a BatchGetItem needs `dynamodb:BatchGetItem` on each table
 * it reads; a transaction needs the action of each item (there is no
 * IAM action for TransactWriteItems itself). Free of jest.
 */
import type { BatchStatementRequest, DynamoDBClient, TransactWriteItem } from '@aws-sdk/client-dynamodb';

/** `table → actions` seen, e.g. `locks → {dynamodb:PutItem, dynamodb:PartiQLInsert}`. */
export type ActionsByTable = Map<string, Set<string>>;

const TRANSACT_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

const PARTIQL_KINDS: Readonly<Record<string, string>> = { INSERT: 'Insert', UPDATE: 'Update', DELETE: 'Delete', SELECT: 'Select' };

function actionsOf(operation: string, input: Record<string, unknown>): [table: string, action: string][] {
  if (operation === 'BatchExecuteStatement') {
    return (input['Statements'] as BatchStatementRequest[]).map((statement): [string, string] => {
      // The first word is the kind; the first double-quoted name is the table.
      const text = statement.Statement ?? '';
      const kind = PARTIQL_KINDS[text.split(' ')[0] ?? ''] ?? 'Unknown';
      return [/"([^"]+)"/.exec(text)?.[1] ?? '?', `PartiQL${kind}`];
    });
  }
  if (operation === 'BatchGetItem') {
    return Object.keys(input['RequestItems'] as Record<string, unknown>).map((table): [string, string] => [table, operation]);
  }
  if (operation === 'TransactWriteItems') {
    return (input['TransactItems'] as TransactWriteItem[]).flatMap((item) =>
      Object.entries(item).map(([kind, body]): [string, string] => [(body as { TableName: string }).TableName, TRANSACT_ACTIONS[kind] ?? kind]),
    );
  }
  return [[String(input['TableName']), operation]];
}

/** Starts recording on `client`; the map fills as calls are sent. */
export function recordIamActions(client: Pick<DynamoDBClient, 'middlewareStack'>): ActionsByTable {
  const seen: ActionsByTable = new Map();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      for (const [table, action] of actionsOf(operation, args.input as Record<string, unknown>)) {
        const actions = seen.get(table) ?? new Set<string>();
        actions.add(`dynamodb:${action}`);
        seen.set(table, actions);
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordIamActions' },
  );
  return seen;
}
