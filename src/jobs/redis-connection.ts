/** How Specula's Redis connections behave when Redis is gone, and how they say so. */

/** How long an API process waits on one Redis command before answering STORE_UNAVAILABLE. */
export const STORE_TIMEOUT_MS = 3000;

/**
 * ioredis options for an API process: a command is not queued while Redis is unreachable (it fails at once),
 * is retried once across a reconnect, and times out when Redis is reachable but does not answer (frozen).
 */
export const FAIL_FAST = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  commandTimeout: STORE_TIMEOUT_MS,
} as const;

export type RedisStateReport = (connection: string, state: 'down' | 'up', error?: Error) => void;

/**
 * ioredis emits 'error' on every failed reconnect; with no listener it prints "[ioredis] Unhandled error event"
 * stack traces to stderr (not JSON) dozens of times an outage. One report when a connection goes down, one when
 * it is back. A lost connection is also reported on 'reconnecting' (emitted only for a loss the client did not ask
 * for): a Redis restarted within ioredis's first retry delay never produces an 'error', and the outage must still
 * be logged.
 */
export function watchRedis(
  client: { on(event: string, fn: (...a: never[]) => void): unknown },
  name: string,
  report?: RedisStateReport,
): void {
  let down = false;
  const goDown = (e: Error): void => {
    if (down) return;
    down = true;
    report?.(name, 'down', e);
  };
  client.on('error', goDown);
  client.on('reconnecting', () => goDown(new Error('connection lost; reconnecting')));
  client.on('ready', () => {
    if (!down) return;
    down = false;
    report?.(name, 'up');
  });
}
