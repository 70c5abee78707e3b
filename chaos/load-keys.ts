/**
 * The keys of a `--load` run, and how the fault schedule reads them back out
 * of a request: which lock keys it names and which worker sent it.
 *
 * - `held/<slot>/<i>`: the locks a worker slot keeps with background heartbeats;
 *   other workers wait on them.
 * - `bulk/<slot>/<i>`: taken in bursts by one slot and released soon after.
 * - `hot/<j>` and `elect/<j>`: wanted by every worker (polls, campaigns); the
 *   schedule throttles some of the requests naming only such keys.
 */
import type { ProxiedRequest } from '../test-kit/fault-proxy.js';

export const heldKey = (slot: number, i: number): string => `held/${slot}/${i}`;
export const bulkKey = (slot: number, i: number): string => `bulk/${slot}/${i}`;
export const hotKey = (j: number): string => `hot/${j}`;
export const electionKey = (j: number): string => `elect/${j}`;

const isHot = (key: string): boolean => key.startsWith('hot/') || key.startsWith('elect/');

/** Every lock key of the run a request names: in `Key`, an `Item` or a batch's parameters, all as `{"S":"…"}`. */
const KEY_IN_BODY = /"S":"((?:held|bulk|hot|elect)\/[^"]+)"/g;

export function keysOf(request: ProxiedRequest): string[] {
  return [...request.body.toString('utf8').matchAll(KEY_IN_BODY)].map((match) => match[1]!);
}

/** True for a request that names hot keys and nothing else (a batch of heartbeats mixing other keys is not one). */
export function namesOnlyHotKeys(keys: readonly string[]): boolean {
  return keys.length > 0 && keys.every(isHot);
}

/**
 * The access key id a load worker signs with: its name, in the letters and
 * digits DynamoDB Local accepts (`w2.3` signs as `chaosw2x3`). The SigV4
 * `Authorization` header carries it in clear, so the schedule knows whose
 * request it faulted.
 */
export const accessKeyOf = (worker: string): string => `chaos${worker.replace(/[^A-Za-z0-9]/g, 'x')}`;

/** The access key id a request was signed with. */
export function senderOf(request: ProxiedRequest): string | undefined {
  return /Credential=([^/,\s]+)\//.exec(request.headers.authorization ?? '')?.[1];
}
