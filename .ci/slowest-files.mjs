// Prints the slowest test files of one or more jest JSON results (from
// `jest --json --outputFile`), each beside its budget, so that a file that
// grows shows up in review. A file over its budget is marked, not failed:
// wall time on a shared machine is a reading, not a verdict.
//
// usage: node .ci/slowest-files.mjs [--top N] LABEL=results.json ...
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const budgets = JSON.parse(readFileSync(new URL('./test-budgets.json', import.meta.url), 'utf8'));

/** A file's budget in seconds: its own, else its folder's default. */
function budgetOf(file) {
  if (budgets.files[file] !== undefined) return budgets.files[file];
  const folder = file.split('/')[0];
  return budgets.defaults[folder] ?? budgets.defaults['*'];
}

const args = process.argv.slice(2);
let top = 15;
const runs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i]);
  else runs.push(args[i]);
}

const rows = [];
for (const run of runs) {
  const [label, path] = [run.slice(0, run.indexOf('=')), run.slice(run.indexOf('=') + 1)];
  let results;
  try {
    results = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    continue; // the summary line reports unreadable results
  }
  for (const file of results.testResults ?? []) {
    const seconds = (file.endTime - file.startTime) / 1000;
    if (!Number.isFinite(seconds)) continue;
    // Named from the repository's root, also for a run in a copy of the tree.
    const name = relative(process.cwd(), file.name).replace(/^(\.\.\/)+.*?\/(?=(test|integration)\/)/, '');
    rows.push({ label, name, seconds, budget: budgetOf(name) });
  }
}

rows.sort((a, b) => b.seconds - a.seconds);
const over = rows.filter((row) => row.seconds > row.budget);
const shown = [...rows.slice(0, top), ...over.filter((row) => !rows.slice(0, top).includes(row))];
const width = Math.max(4, ...shown.map((row) => row.name.length));
console.error(`.ci/run: slowest test files (budgets in .ci/test-budgets.json)`);
console.error(`  ${'run'.padEnd(10)} ${'file'.padEnd(width)} ${'seconds'.padStart(8)} ${'budget'.padStart(7)}`);
for (const row of shown) {
  const mark = row.seconds > row.budget ? '  OVER BUDGET' : '';
  console.error(
    `  ${row.label.padEnd(10)} ${row.name.padEnd(width)} ${row.seconds.toFixed(1).padStart(8)} ${String(row.budget).padStart(7)}${mark}`,
  );
}
console.error(`.ci/run: ${over.length} file run(s) over budget`);
