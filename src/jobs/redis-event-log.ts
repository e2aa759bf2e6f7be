/**
 * A job's events in Redis, for the distributed mode: a list per job is the log (replay), and every append is
 * also published on the job's channel, received through `@graphql-yoga/redis-event-target`, so a subscriber on
 * any API instance hears tokens decoded on any worker.
 *
 * One Lua script numbers the event (INCR), appends it and publishes it, so the log and the live feed agree on
 * order. A subscriber reads the log by position and treats a published event only as news: it is used when it
 * is the very next one, otherwise the subscriber re-reads the log. That closes the window between subscribing
 * and replaying (no gap), and an event is never yielded twice. Delivery to a client is at-least-once across
 * reconnects: it resumes with `after: <last seq>` and drops anything at or below it.
 */
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from '@graphql-yoga/subscription';
import type { Redis } from 'ioredis';
import { type EventLog, type JobEvent, isFinal, type Sequenced } from './events.js';

// KEYS: seq counter, log list, final-seq key, latest run key. ARGV: channel, event JSON without seq/jobId (an
// object), job id, final ('1'/'0'), retention seconds, run (0: not a worker's run). Returns the seq, or 0 when
// refused: after the final event, or from a run older than the latest one that published.
const APPEND = `
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local run = tonumber(ARGV[6])
if run > 0 then
  local latest = tonumber(redis.call('GET', KEYS[4]) or '0')
  if run < latest then return 0 end
  if run > latest then redis.call('SET', KEYS[4], run) end
end
local seq = redis.call('INCR', KEYS[1])
local body = string.sub(ARGV[2], 2)
local sep = ''
if body ~= '}' then sep = ',' end
local json = '{"seq":' .. seq .. ',"jobId":' .. cjson.encode(ARGV[3]) .. sep .. body
redis.call('RPUSH', KEYS[2], json)
redis.call('PUBLISH', ARGV[1], json)
if ARGV[4] == '1' then
  redis.call('SET', KEYS[3], seq, 'EX', tonumber(ARGV[5]))
  for i = 1, 4 do
    if i ~= 3 then redis.call('EXPIRE', KEYS[i], tonumber(ARGV[5])) end
  end
end
return seq
`;

/** How often a subscriber re-reads the log even without news (a safety net, not the delivery path). */
const POLL_MS = 2000;
/** Events read from the log at once: a long job's log (a token event per line per step) is replayed in pages. */
export const REPLAY_PAGE = 500;

export class RedisEventLog implements EventLog {
  private readonly p: string;
  private readonly pubsub: ReturnType<typeof createPubSub<Record<string, [Sequenced]>>>;

  constructor(
    private readonly redis: Redis,
    subscriber: Redis,
    private readonly opts: { prefix?: string; retentionSeconds: number },
  ) {
    this.p = opts.prefix ?? 'specula';
    redis.defineCommand('speculaAppend', { numberOfKeys: 4, lua: APPEND });
    this.pubsub = createPubSub<Record<string, [Sequenced]>>({
      eventTarget: createRedisEventTarget({ publishClient: redis, subscribeClient: subscriber }),
    });
  }

  private channel = (jobId: string): string => `${this.p}:events:${jobId}`;
  private seqKey = (jobId: string): string => `${this.p}:job:${jobId}:seq`;
  private logKey = (jobId: string): string => `${this.p}:job:${jobId}:events`;
  private finalKey = (jobId: string): string => `${this.p}:job:${jobId}:final`;
  private runKey = (jobId: string): string => `${this.p}:job:${jobId}:run`;

  async publish(jobId: string, event: JobEvent, run = 0): Promise<Sequenced | null> {
    const seq = await (
      this.redis as Redis & { speculaAppend(...a: (string | number)[]): Promise<number> }
    ).speculaAppend(
      this.seqKey(jobId),
      this.logKey(jobId),
      this.finalKey(jobId),
      this.runKey(jobId),
      this.channel(jobId),
      JSON.stringify(event),
      jobId,
      isFinal(event) ? '1' : '0',
      this.opts.retentionSeconds,
      run,
    );
    return seq ? ({ ...event, seq, jobId } as Sequenced) : null;
  }

  private async read(jobId: string, from: number): Promise<Sequenced[]> {
    const raw = await this.redis.lrange(this.logKey(jobId), from, from + REPLAY_PAGE - 1);
    return raw.map((r) => JSON.parse(r) as Sequenced);
  }

  async *subscribe(jobId: string, afterSeq = 0, signal?: AbortSignal): AsyncIterable<Sequenced> {
    const live = this.pubsub.subscribe(this.channel(jobId))[Symbol.asyncIterator]();
    let next = afterSeq; // events are 1-based and the list 0-based: list[next] holds seq next + 1
    // Listen before the first read of the log, so the feed is open by the time the log runs out.
    let pending: Promise<IteratorResult<Sequenced>> | null = live.next();
    const stop = new Promise<'stop'>((resolve) => {
      if (signal?.aborted) resolve('stop');
      signal?.addEventListener('abort', () => resolve('stop'), { once: true });
    });
    try {
      for (;;) {
        // A client resuming at or after the job's final event: nothing more will come.
        const final = await this.redis.get(this.finalKey(jobId));
        if (final !== null && next >= Number(final)) return;
        for (;;) {
          const page = await this.read(jobId, next);
          for (const e of page) {
            next = e.seq;
            yield e;
            if (isFinal(e)) return;
          }
          if (page.length < REPLAY_PAGE) break;
        }
        if (signal?.aborted) return;
        for (;;) {
          pending ??= live.next();
          let timer: NodeJS.Timeout | undefined;
          const poll = new Promise<'poll'>((resolve) => {
            timer = setTimeout(() => resolve('poll'), POLL_MS);
          });
          const got = await Promise.race([pending, stop, poll]);
          clearTimeout(timer);
          if (got === 'stop') return;
          if (got === 'poll') break; // re-read the log
          pending = null;
          if (got.done) return;
          const e = got.value;
          if (e.seq <= next) continue; // already yielded from the log
          if (e.seq !== next + 1) break; // something came before it: the log has it
          next = e.seq;
          yield e;
          if (isFinal(e)) return;
        }
      }
    } finally {
      await live.return?.();
    }
  }
}
