import { describe, expect, it } from '@jest/globals';
import { lockJson, previewData } from '../../src/cli/lock-format.js';

describe('showing locks', () => {
  const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

  it('previews text data, cut to length, and binary or control-character data as hex', () => {
    expect(previewData(undefined)).toBe('');
    expect(previewData(utf8('{"host":"a"}'))).toBe('{"host":"a"}');
    expect(previewData(utf8('x'.repeat(50)), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(previewData(new Uint8Array([0xff, 0x00, 0x10]))).toBe('0xff0010 (3 bytes)');
    expect(previewData(utf8('a\u001b[2Jb'))).toMatch(/^0x611b5b324a62 \(6 bytes\)$/);
  });

  it('gives scripts the data as text when it is UTF-8, and always as base64', () => {
    const base = { partitionKey: 'k', sortKey: undefined, ownerName: 'o', recordVersionNumber: 'r', leaseDuration: 20_000, isReleased: false };
    expect(lockJson({ ...base, data: utf8('hi') })).toEqual({ ...base, sortKey: null, dataText: 'hi', dataBase64: 'aGk=' });
    expect(lockJson({ ...base, data: new Uint8Array([0xc3]) })).toMatchObject({ dataText: null, dataBase64: 'ww==' });
    expect(lockJson({ ...base, data: undefined })).toMatchObject({ dataText: null, dataBase64: null });
  });
});
