/** A small client for the API tests: plain fetch for queries and multipart uploads, SSE and graphql-ws for events. */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

export interface GqlResult<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; extensions?: Record<string, unknown>; path?: string[] }[];
}

export class ApiClient {
  constructor(
    readonly base: string,
    readonly key?: string,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.key ? { authorization: `Bearer ${this.key}` } : {}), ...extra };
  }

  async query<T = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown> = {},
  ): Promise<GqlResult<T>> {
    const res = await fetch(`${this.base}/graphql`, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, ...((await res.json()) as object) };
  }

  /** A GraphQL multipart request (the spec's operations + map + file parts). */
  async upload<T = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown>,
    filePath: string[],
    bytes: Uint8Array,
    name: string,
    csrf = true,
  ): Promise<GqlResult<T>> {
    const form = new FormData();
    form.set('operations', JSON.stringify({ query, variables }));
    form.set('map', JSON.stringify({ 0: [`variables.${filePath.join('.')}`] }));
    form.set('0', new Blob([Buffer.from(bytes)]), name);
    const res = await fetch(`${this.base}/graphql`, {
      method: 'POST',
      headers: this.headers(csrf ? { 'x-graphql-yoga-csrf': '1' } : {}),
      body: form,
    });
    const text = await res.text();
    try {
      return { status: res.status, ...(JSON.parse(text) as object) };
    } catch {
      return { status: res.status, errors: [{ message: text }] };
    }
  }

  /** A subscription over server-sent events (POST, Accept: text/event-stream); every `next` payload, in order. */
  async sse<T>(
    query: string,
    variables: Record<string, unknown>,
    onEvent?: (payload: GqlResult<T>) => void,
  ): Promise<GqlResult<T>[]> {
    const res = await fetch(`${this.base}/graphql`, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
      body: JSON.stringify({ query, variables }),
    });
    if (!res.body) throw new Error(`no event stream (HTTP ${res.status})`);
    const out: GqlResult<T>[] = [];
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('\n');
        if (event === 'complete') return out;
        if (event === 'next' && data) {
          const payload = { status: res.status, ...(JSON.parse(data) as object) } as GqlResult<T>;
          out.push(payload);
          onEvent?.(payload);
        }
      }
    }
    return out;
  }

  /** A subscription over graphql-ws; resolves with every payload when the server completes it. */
  ws<T>(query: string, variables: Record<string, unknown>): Promise<GqlResult<T>[]> {
    const client = createClient({
      url: `${this.base.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: this.key ? { authorization: `Bearer ${this.key}` } : {},
      retryAttempts: 0,
      lazy: true,
    });
    const out: GqlResult<T>[] = [];
    return new Promise<GqlResult<T>[]>((resolve, reject) => {
      client.subscribe<T>(
        { query, variables },
        {
          next: (v) => out.push({ status: 101, ...(v as object) } as GqlResult<T>),
          error: (e) => {
            void client.dispose();
            reject(e instanceof Error ? e : new Error(JSON.stringify(e)));
          },
          complete: () => {
            void client.dispose();
            resolve(out);
          },
        },
      );
    });
  }
}

export const codes = (r: GqlResult<unknown>): string[] => (r.errors ?? []).map((e) => String(e.extensions?.code ?? ''));
