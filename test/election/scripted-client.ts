/** The election's polling reads, without DynamoDB: the tests script what each read returns. */
import { LockClient } from '../../src/index.js';

export type Answer = { owner: string; rvn: string; data?: string } | undefined | Error;

/** A real LockClient whose DynamoDB plays back one answer per GetItem call. */
export function scripted(answers: readonly Answer[]): { client: LockClient; calls: () => number } {
  let call = 0;
  const send = async (): Promise<unknown> => {
    const answer = answers[Math.min(call++, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    if (answer === undefined) return {};
    return {
      Item: {
        key: { S: 'k' },
        ownerName: { S: answer.owner },
        leaseDuration: { S: '1000' },
        recordVersionNumber: { S: answer.rvn },
        ...(answer.data === undefined ? {} : { data: { B: new TextEncoder().encode(answer.data) } }),
      },
    };
  };
  const client = new LockClient({ dynamoDB: { send }, tableName: 'locks', ownerName: 'observer' });
  return { client, calls: () => call };
}
