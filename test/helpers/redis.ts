/** The Redis the integration tests run against, and a fast check that it is there: with Redis away, ioredis and
 * BullMQ retry forever, so a suite would hang (CI once sat out its whole limit that way) instead of failing.
 */
import { Redis } from 'ioredis';

export const TEST_REDIS = process.env.SPECULA_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Resolves once Redis answers PING; rejects within a few seconds, naming the URL, when it does not. */
export async function assertRedisReachable(url = TEST_REDIS): Promise<void> {
  const r = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  try {
    await r.connect();
    await r.ping();
  } catch (err) {
    throw new Error(
      `these tests need Redis at ${url} (set SPECULA_TEST_REDIS_URL, or start redis-server): ${(err as Error).message}`,
    );
  } finally {
    r.disconnect();
  }
}
