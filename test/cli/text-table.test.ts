import { describe, expect, it } from '@jest/globals';
import { renderFields, renderTable } from '../../src/cli/text-table.js';

describe('showing locks', () => {
  it('aligns columns and escapes control characters that came from the table', () => {
    expect(
      renderTable(
        ['KEY', 'OWNER'],
        [
          ['a', 'me'],
          ['longer', 'you\n'],
        ],
      ),
    ).toBe('KEY     OWNER\na       me\nlonger  you\\u000a\n');
    expect(
      renderFields([
        ['key', '"a"'],
        ['owner', 'me'],
      ]),
    ).toBe('key    "a"\nowner  me\n');
  });
});
