/** Lock data: a string goes in as its UTF-8 bytes, and comes back as text when it is UTF-8. */
import { describe, expect, it } from '@jest/globals';
import { textOf, toBytes } from '../../src/primitives/bytes.js';

describe('textOf', () => {
  it('gives back the string the data was given as', () => {
    for (const text of ['', 'done', 'ünïcode ✓', '😀 astral', '{"address":"http://10.0.0.7:8080"}']) {
      expect(textOf(toBytes(text))).toBe(text);
    }
  });

  it('gives no text for data that is not UTF-8, nor for none', () => {
    expect(textOf(new Uint8Array([0xff, 0xfe, 0x00]))).toBeUndefined();
    expect(textOf(new Uint8Array([0xc3]))).toBeUndefined(); // a character cut in half
    expect(textOf(undefined)).toBeUndefined();
  });
});
