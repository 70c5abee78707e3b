/**
 * A DynamoDB number that a JavaScript `number` would round (DynamoDB keeps 38
 * significant digits), carried as its decimal text.
 */
import { InvalidArgumentError } from '../base/errors.js';

/** A number as DynamoDB writes it: optional sign, digits with an optional point, optional exponent. */
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export class NumberValue {
  /** The number's decimal text, e.g. `'12345678901234567890.5'`. */
  readonly value: string;

  constructor(value: string) {
    if (typeof value !== 'string' || !NUMBER_TEXT.test(value)) {
      throw new InvalidArgumentError('INVALID_ATTRIBUTE_VALUE', `NumberValue: ${JSON.stringify(value)} is not a decimal number`);
    }
    this.value = value;
  }

  toString(): string {
    return this.value;
  }
}

/** Numbers stay exact: plain `number` where that is lossless, {@link NumberValue} otherwise. */
export function readNumber(text: string): number | NumberValue {
  const n = Number(text);
  return String(n) === text ? n : new NumberValue(text);
}
