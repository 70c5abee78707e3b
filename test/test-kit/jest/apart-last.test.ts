/**
 * `npm test` runs the files that need the CPU on time after all the others,
 * alone: without them beside it, a 2-core machine starves none of them.
 */
import { expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The test files `command` lists (jest's --listTests), in its order, relative to the repository. */
function listed(script: string, mode?: string): string[] {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['JEST_APART'];
  if (mode !== undefined) env['JEST_APART'] = mode;
  const out = execFileSync(process.execPath, ['--experimental-vm-modules', script, '--listTests'], { cwd: ROOT, env, encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.endsWith('.test.ts'))
    .map((line) => line.slice(ROOT.length));
}

it('lists every file once, the apart ones (and only they) last', () => {
  const all = listed('node_modules/jest/bin/jest.js');
  const apart = listed('node_modules/jest/bin/jest.js', 'only');
  const inOrder = listed('test-kit/jest/apart-last.mjs');

  expect(apart).toContain('integration/heartbeat/lane.test.ts');
  expect(apart).toContain('test/chaos/driver.test.ts');
  expect(apart.length).toBeLessThan(all.length / 4);
  expect([...inOrder].sort()).toEqual([...all].sort());
  expect(new Set(inOrder.slice(-apart.length))).toEqual(new Set(apart));
}, 60_000);
