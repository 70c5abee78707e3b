// Runs before `npm start` and `npm test`: on a fresh clone, installs the locked
// dependencies first, so that the README's two commands work as they are.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../node_modules/.package-lock.json', import.meta.url))) {
  console.error('dependencies missing: running npm ci');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' });
}
