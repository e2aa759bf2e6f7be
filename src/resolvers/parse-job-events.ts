/**
 * parseJobEvents: the job's events so far, then live ones, numbered, ending with the job's final event. A client
 * that reconnects passes the last sequence number it saw as `after` and misses nothing.
 */
import type { Sequenced } from '../jobs/events.js';
import type { TenantContext } from './context.js';
import { apiError } from './errors.js';
import { isJobId } from './job-id.js';

/** An iterable whose early end (the client went away) aborts the subscription it reads from. */
function abortable<T>(open: (signal: AbortSignal) => Promise<AsyncIterable<T>>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const ctrl = new AbortController();
      let inner: AsyncIterator<T> | null = null;
      const ready = open(ctrl.signal).then((it) => (inner = it[Symbol.asyncIterator]()));
      return {
        next: async () => (await ready).next(),
        return: async (value?: unknown) => {
          ctrl.abort();
          await ready.catch(() => undefined);
          await inner?.return?.();
          return { done: true, value: value as T };
        },
      };
    },
  };
}

export async function subscribeParseJobEvents(
  id: string,
  after: number | null | undefined,
  ctx: TenantContext,
): Promise<AsyncIterable<Sequenced>> {
  const { tenant } = ctx;
  const from = after ?? 0;
  if (!Number.isInteger(from) || from < 0)
    throw apiError('BAD_USER_INPUT', `after must be a sequence number >= 0, got ${from}`);
  // Check ownership before the stream starts, so a stranger's subscription fails as a plain error.
  if (!isJobId(id) || !(await ctx.jobs.get(tenant, id))) throw apiError('NOT_FOUND', `no parse job with id "${id}"`);
  return abortable(async (signal) => {
    const events = await ctx.jobs.events(
      tenant,
      id,
      from,
      ctx.shutdown ? AbortSignal.any([signal, ctx.shutdown]) : signal,
    );
    if (!events) throw apiError('NOT_FOUND', `no parse job with id "${id}"`);
    return events;
  });
}
