/**
 * Tells an answer of DynamoDB from one of something else at its endpoint: a
 * web server, a proxy's error page, a wrong port. DynamoDB (and DynamoDB
 * Local) marks every answer, error or not, with a request id and its JSON
 * content type; without either, the SDK would report a JSON parse error, a
 * bare `UnknownError`, or even a table that does not exist (an empty `{}`).
 * The CLI's DynamoDB client refuses such an answer with a
 * {@link ForeignAnswerError} that names the endpoint and the HTTP status.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export class ForeignAnswerError extends Error {
  override name = 'ForeignAnswerError';
  /** The URL the request went to, without its path: `http://127.0.0.1:8000`. */
  readonly endpoint: string;
  readonly statusCode: number;
  readonly contentType: string | undefined;
  constructor(endpoint: string, statusCode: number, contentType: string | undefined, options?: ErrorOptions) {
    super(`${endpoint} did not answer as DynamoDB (HTTP ${statusCode}${contentType === undefined ? '' : `, ${contentType}`})`, options);
    this.endpoint = endpoint;
    this.statusCode = statusCode;
    this.contentType = contentType;
  }
}

interface RawRequest {
  readonly protocol?: string;
  readonly hostname?: string;
  readonly port?: number;
}
interface RawResponse {
  readonly statusCode?: number;
  readonly headers?: Readonly<Record<string, string | undefined>>;
}

/** Adds the check to `dynamoDB`: every answer without DynamoDB's marks becomes a {@link ForeignAnswerError}. */
export function refuseForeignAnswers(dynamoDB: DynamoDBClient): void {
  dynamoDB.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as RawRequest;
      let result;
      try {
        result = await next(args);
      } catch (error) {
        checkAnswer(request, (error as { $response?: RawResponse }).$response, error);
        throw error;
      }
      checkAnswer(request, result.response as RawResponse, undefined);
      return result;
    },
    // Around the SDK's deserializer, to see the raw answer it read or failed to read.
    { step: 'deserialize', name: 'refuseForeignAnswers', priority: 'high' },
  );
}

function checkAnswer(request: RawRequest, response: RawResponse | undefined, cause: unknown): void {
  if (response?.statusCode === undefined) return; // no answer at all: a network error, told as one
  const header = (name: string): string | undefined => Object.entries(response.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
  const contentType = header('content-type');
  if (header('x-amzn-requestid') !== undefined || contentType?.startsWith('application/x-amz-json') === true) return;
  const port = request.port === undefined ? '' : `:${request.port}`;
  throw new ForeignAnswerError(`${request.protocol ?? 'https:'}//${request.hostname ?? ''}${port}`, response.statusCode, contentType, { cause });
}
