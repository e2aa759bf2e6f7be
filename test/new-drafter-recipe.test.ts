/**
 * docs/architecture.md's recipe for a new drafter, followed for real: a toy drafter declared here (its own code
 * plus one registry call, no other file touched) is offered by the GraphQL schema and the engine query, picked by
 * name through the API, runs in the engine, and under the greedy verifier changes nothing but speed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Draft } from '../src/engine/strategies/draft.js';
import type { Drafter, SequenceView } from '../src/engine/strategies/drafters/drafter.js';
import { registerDrafter } from '../src/engine/strategies/registry.js';
import { ApiClient } from './helpers/api-client.js';
import { SAMPLE_PAGE } from './helpers/fixtures.js';

/** Drafts the last committed token again, as far as the budget goes: right on "...", wrong almost everywhere else. */
class RepeatLastDrafter implements Drafter {
  readonly name = 'repeat-last';
  propose(seqs: readonly SequenceView[]): Draft[] {
    return seqs.map((s) =>
      s.tokens.length ? { tokens: Array<number>(s.budget).fill(s.tokens[s.tokens.length - 1]) } : { tokens: [] },
    );
  }
}

// The one registry line. The server is imported after it (below), as a real server process loads its drafters
// before it builds its schema.
registerDrafter({
  name: 'repeat-last',
  description: 'A toy: the last token again.',
  create: () => new RepeatLastDrafter(),
});

const CREATE = `mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }`;
const EVENTS = `subscription($id: ID!) { parseJobEvents(id: $id) { __typename } }`;
const JOB =
  `query($id: ID!) { parseJob(id: $id) { status markdown decoding { ` +
  `drafter verifier } metrics { draftTokens forwards } } }`;

interface Job {
  status: string;
  markdown: string;
  decoding: { drafter: string; verifier: string };
  metrics: { draftTokens: number; forwards: number };
}

describe('a drafter added by the recipe', () => {
  let close: () => Promise<void>;
  let api: ApiClient;

  before(async () => {
    const { startServer } = await import('../src/server/start.js');
    const { configFromEnv } = await import('../src/server/config.js');
    const server = await startServer(
      configFromEnv({ PORT: '0', HOST: '127.0.0.1', SPECULA_API_KEYS: 'acme:key-acme-1', LOG_LEVEL: 'silent' }),
    );
    close = () => server.close();
    api = new ApiClient(`http://127.0.0.1:${server.port}`, 'key-acme-1');
  });
  after(() => close?.());

  async function read(decoding: Record<string, string>): Promise<Job> {
    const r = await api.upload<{ createParseJob: { id: string } }>(
      CREATE,
      { input: { file: null, decoding } },
      ['input', 'file'],
      readFileSync(SAMPLE_PAGE),
      'page.png',
    );
    assert.equal(r.errors, undefined, JSON.stringify(r.errors));
    const id = (r.data as { createParseJob: { id: string } }).createParseJob.id;
    await api.sse(EVENTS, { id });
    return ((await api.query<{ parseJob: Job }>(JOB, { id })).data as { parseJob: Job }).parseJob;
  }

  it('is offered by the engine query, with its description', async () => {
    const r = await api.query<{
      engine: { strategies: { drafters: { name: string; description: string; available: boolean }[] } };
    }>('{ engine { strategies { drafters { name description available } } } }');
    const mine = r.data?.engine.strategies.drafters.find((d) => d.name === 'REPEAT_LAST');
    assert.deepEqual(mine, { name: 'REPEAT_LAST', description: 'A toy: the last token again.', available: true });
  });

  it(
    'is picked by name through the API, drafts, and reads the page exactly ' + 'as plain greedy decoding does',
    async () => {
      const toy = await read({ drafter: 'REPEAT_LAST', verifier: 'GREEDY' });
      const plain = await read({ drafter: 'NONE', verifier: 'GREEDY' });
      assert.equal(toy.status, 'SUCCEEDED');
      assert.deepEqual(toy.decoding, { drafter: 'REPEAT_LAST', verifier: 'GREEDY' });
      assert.ok(toy.metrics.draftTokens > 0, 'the toy drafted');
      assert.ok(plain.markdown.length > 100);
      assert.equal(toy.markdown, plain.markdown);
    },
  );
});
