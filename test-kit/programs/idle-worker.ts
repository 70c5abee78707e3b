/**
 * A stand-in chaos worker for tests of the driver: it writes its pid to its
 * log file and idles until killed.
 */
import { appendFileSync } from 'node:fs';

const config = JSON.parse(process.argv[2] ?? '{}') as { logFile: string };
appendFileSync(config.logFile, `${process.pid}\n`);
setInterval(() => undefined, 60_000);
