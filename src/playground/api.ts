/**
 * The playground's API client: the key it sends (kept in localStorage as soon as it is typed, so a reload keeps
 * it), GraphQL over POST, the multipart upload, and a job's events over server-sent events.
 */
import type { GqlError, JobEvent } from './types.js';

const KEY = 'specula-key';

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The key the page sends, as last typed; empty when none is. */
export const storedKey = (): string => localStorage.getItem(KEY) ?? '';

/** Keep the key typed (or forget it, when the field is emptied). */
export function storeKey(key: string): void {
  if (key.trim()) localStorage.setItem(KEY, key.trim());
  else localStorage.removeItem(KEY);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = storedKey();
  return { ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra };
}

export function firstError(body: { errors?: GqlError[] }): ApiError | null {
  const e = body.errors?.[0];
  return e ? new ApiError(e.extensions?.code ?? 'ERROR', e.message) : null;
}

/** POST to /graphql and return the data, or throw the first error. */
async function post<T>(extraHeaders: Record<string, string>, body: BodyInit): Promise<T> {
  const res = await fetch('/graphql', { method: 'POST', headers: headers(extraHeaders), body });
  const json = (await res.json()) as { data?: T; errors?: GqlError[] };
  const err = firstError(json);
  if (err) throw err;
  return json.data as T;
}

export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  return post<T>({ 'content-type': 'application/json' }, JSON.stringify({ query, variables }));
}

export async function upload(file: File, decoding: Record<string, unknown>): Promise<string> {
  const form = new FormData();
  form.set(
    'operations',
    JSON.stringify({
      query: 'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }',
      variables: { input: { file: null, decoding } },
    }),
  );
  form.set('map', JSON.stringify({ 0: ['variables.input.file'] }));
  form.set('0', file, file.name);
  const data = await post<{ createParseJob: { id: string } }>({ 'x-graphql-yoga-csrf': 'playground' }, form);
  return data.createParseJob.id;
}

const EVENTS = `subscription($id: ID!) { parseJobEvents(id: $id) {
  __typename
  ... on JobEvent { seq }
  ... on TokenDelta { page line text fromDraft accepted drafted }
  ... on JobDone { metrics {
    tokensPerForward forwards sequenceForwards acceptanceByPosition committedTokens acceptedTokens visualTokenRatio
  } }
  ... on JobFailed { code message }
  ... on JobRestarted { attempt }
} }`;

/** Follow a job over server-sent events (POST + Accept: text/event-stream), one event at a time. */
export async function follow(id: string, onEvent: (e: JobEvent) => void): Promise<void> {
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
    body: JSON.stringify({ query: EVENTS, variables: { id } }),
  });
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => ({}))) as { errors?: GqlError[] };
    throw firstError(body) ?? new ApiError('HTTP_' + res.status, `the event stream failed (HTTP ${res.status})`);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const kind = /^event: (.*)$/m.exec(block)?.[1];
      if (kind === 'complete') return;
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      if (kind !== 'next' || !data) continue;
      const payload = JSON.parse(data) as { data?: { parseJobEvents: JobEvent }; errors?: GqlError[] };
      const err = firstError(payload);
      if (err) throw err;
      if (payload.data) onEvent(payload.data.parseJobEvents);
    }
  }
}
