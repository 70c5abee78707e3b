/**
 * A nightly job meant to run under `dynamodb-lock run`, which holds the lock
 * while it runs (see README.md beside it). The job knows nothing of locks: if
 * the lock is lost, `dynamodb-lock run` sends it SIGTERM, and it stops before
 * its next step.
 */
import { setTimeout as sleep } from 'node:timers/promises';

const stopping = new AbortController();
process.once('SIGTERM', () => stopping.abort());

const steps = ['collect', 'aggregate', 'publish'];
for (const step of steps) {
  if (stopping.signal.aborted) {
    console.error(`report: stopped before ${step}`);
    process.exit(1);
  }
  await sleep(Number(process.env['REPORT_STEP_MS'] ?? 500), undefined, { signal: stopping.signal }).catch(() => undefined);
  console.log(`report: ${step} done`);
}
console.log(`report: written by ${process.pid}`);
