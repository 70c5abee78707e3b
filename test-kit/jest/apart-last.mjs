/**
 * `npm test`'s jest: every file but jest.config.js's `apart` ones side by
 * side, then those alone, so that a 2-core machine does not starve them.
 * Arguments go to both runs (a file named for one run is not found in the
 * other, which passes). With JEST_APART set, one run in that mode: .ci/run
 * runs the apart files itself, on every Node.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const jestBin = fileURLToPath(new URL('../../node_modules/jest/bin/jest.js', import.meta.url));
const args = process.argv.slice(2);

/** Runs jest in `mode` with the caller's arguments; its exit status. */
function jest(mode, ...extra) {
  const run = spawnSync(process.execPath, ['--experimental-vm-modules', jestBin, ...extra, ...args], {
    stdio: 'inherit',
    env: { ...process.env, JEST_APART: mode },
  });
  return run.status ?? 1;
}

const mode = process.env.JEST_APART;
if (mode !== undefined && mode !== '') process.exit(jest(mode));
const rest = jest('skip', '--passWithNoTests');
const apart = jest('only', '--passWithNoTests');
process.exit(rest !== 0 ? rest : apart);
