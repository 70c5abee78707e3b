/**
 * A lock holder process for the takeover scenario: acquires one lock with
 * either library, lets its heartbeats run, and waits to be SIGKILLed.
 *
 * Usage: acquire-holder.ts <json: ClientProcessConfig>
 */
import { openClient, type ClientProcessConfig } from './acquire-clients.js';
import { report } from './acquire-processes.js';

const config = JSON.parse(process.argv[2] ?? '') as ClientProcessConfig;
const client = openClient(config.client, config.endpoint, config.settings, config.name);
await client.acquire(config.key);
report('acquired');
// Heartbeat timers may be unref'd: keep the process alive until it is killed.
setInterval(() => undefined, 60_000);
