/**
 * The GraphQL API over real HTTP and real WebSockets, with the real engine behind it: uploads, token streams,
 * per-request decoding, tenants, limits, bad input, health and metrics.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { getIntrospectionQuery } from 'graphql';
import sharp from 'sharp';
import { printedSchema } from '../schema/print.js';
import { decodeImage } from '../src/document/decode-image.js';
import { latexRenders } from '../src/document/formula.js';
import { findLines } from '../src/document/layout/lines.js';
import { configFromEnv } from '../src/server/config.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { DEFAULT_FORMULA_BUNDLE } from '../src/worker/formula-reader.js';
import { ApiClient, codes, type GqlResult } from './helpers/api-client.js';
import { hugePngHeader, ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';
import { pdfOfImages } from './helpers/pdfs.js';

const CREATE = `mutation Create($input: CreateParseJobInput!) { createParseJob(input: $input) { id status } }`;
const EVENTS = `subscription Events($id: ID!, $after: Int) {
  parseJobEvents(id: $id, after: $after) {
    __typename
    ... on JobEvent { seq jobId }
    ... on TokenDelta { page line text fromDraft }
    ... on PageDone { page markdown }
    ... on RegionDone { block }
    ... on JobDone { metrics { tokensPerForward forwards lines } job { status markdown } }
    ... on JobFailed { code message }
  }
}`;
const JOB =
  `query Job($id: ID!) { parseJob(id: $id) { id status markdown error { ` +
  `code message } metrics { tokensPerForward acceptedTokens forwards } } ` +
  `}`;

interface Event {
  __typename: string;
  seq: number;
  jobId: string;
  page?: number;
  line?: number;
  text?: string;
  fromDraft?: boolean[];
  code?: string;
  metrics?: { tokensPerForward: number };
  job?: { status: string; markdown: string | null };
}
type Events = GqlResult<{ parseJobEvents: Event }>[];
interface Job {
  id: string;
  status: string;
  markdown: string | null;
  error: { code: string; message: string } | null;
  metrics: { tokensPerForward: number; acceptedTokens: number; forwards: number } | null;
}

const sample = readFileSync(SAMPLE_PAGE);
const events = (r: Events): Event[] => r.map((p) => p.data?.parseJobEvents as Event);

/** The lines of each page, put back together from the token deltas (lines decode side by side). */
function spell(evs: Event[]): Map<string, string> {
  const lines = new Map<string, string>();
  for (const e of evs)
    if (e.__typename === 'TokenDelta')
      lines.set(`${e.page}:${e.line}`, (lines.get(`${e.page}:${e.line}`) ?? '') + e.text);
  return lines;
}

describe('the GraphQL API', () => {
  let server: RunningServer;
  let base: string;
  let acme: ApiClient;
  let globex: ApiClient;
  /** A strip of the sample page: a fifth of it, quick to read, for tests that need a job but not a page. */
  let strip: Buffer;

  before(async () => {
    server = await startServer(
      configFromEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        SPECULA_API_KEYS: 'acme:key-acme-1,globex:key-globex-1',
        SPECULA_MAX_UPLOAD_BYTES: String(2 * 1024 * 1024),
        // Room in one forward for several jobs' lines (the strip is 14 of them), so shared batches show in row counts.
        SPECULA_MAX_BATCH: '32',
        LOG_LEVEL: 'silent',
      }),
    );
    base = `http://127.0.0.1:${server.port}`;
    acme = new ApiClient(base, 'key-acme-1');
    globex = new ApiClient(base, 'key-globex-1');
    const meta = await sharp(sample).metadata();
    strip = await sharp(sample)
      .extract({ left: 0, top: 0, width: meta.width as number, height: Math.round((meta.height as number) * 0.2) })
      .png()
      .toBuffer();
  });
  after(async () => {
    await server?.close();
  });

  async function submit(
    client: ApiClient,
    bytes: Uint8Array,
    name: string,
    input: Record<string, unknown> = {},
  ): Promise<string> {
    const r = await client.upload<{ createParseJob: { id: string } }>(
      CREATE,
      { input: { file: null, ...input } },
      ['input', 'file'],
      bytes,
      name,
    );
    assert.equal(r.errors, undefined, JSON.stringify(r.errors));
    return (r.data as { createParseJob: { id: string } }).createParseJob.id;
  }

  async function finish(client: ApiClient, id: string): Promise<Job> {
    await client.sse(EVENTS, { id });
    const r = await client.query<{ parseJob: Job }>(JOB, { id });
    return (r.data as { parseJob: Job }).parseJob;
  }

  it(
    'a page in a script the model never learnt comes back with its lines ' +
      'marked unread, streamed, nothing decoded; scriptGate: false decodes ' +
      'them',
    async () => {
      const korean = readFileSync(join(ROOT, 'test', 'fixtures', 'korean-page.png'));
      const query =
        `query($id: ID!) { parseJob(id: $id) { status metrics { forwards } ` +
        `pages { blocks { lines { text unread } } } } }`;
      type Tree = {
        parseJob: {
          status: string;
          metrics: { forwards: number };
          pages: { blocks: { lines: { text: string; unread: boolean }[] }[] }[];
        };
      };
      const gated = await submit(acme, korean, 'korean.png');
      const forced = await submit(acme, korean, 'korean.png', { scriptGate: false });
      const streamed = spell(events(await acme.sse<{ parseJobEvents: Event }>(EVENTS, { id: gated })));
      await finish(acme, forced);
      const a = (await acme.query<Tree>(query, { id: gated })).data?.parseJob;
      const b = (await acme.query<Tree>(query, { id: forced })).data?.parseJob;
      const linesOf = (j: Tree['parseJob'] | undefined): { text: string; unread: boolean }[] =>
        j?.pages[0].blocks.flatMap((x) => x.lines) ?? [];
      assert.equal(a?.status, 'SUCCEEDED');
      assert.ok(linesOf(a).length >= 15 && linesOf(a).every((l) => l.unread), 'every line unread');
      assert.equal(a?.metrics.forwards, 0);
      assert.deepEqual(
        linesOf(a).map((_, i) => streamed.get(`0:${i}`) ?? ''),
        linesOf(a).map((l) => l.text),
        'their tokens are streamed too',
      );
      assert.equal(b?.status, 'SUCCEEDED');
      assert.ok(
        linesOf(b).every((l) => !l.unread),
        'scriptGate: false marks nothing unread',
      );
      assert.ok((b?.metrics.forwards ?? 0) > 0, 'and decodes');
      // The sample page is in Latin: nothing of it is unread.
      const latin = await submit(acme, strip, 'strip.png');
      await finish(acme, latin);
      assert.ok(linesOf((await acme.query<Tree>(query, { id: latin })).data?.parseJob).every((l) => !l.unread));
    },
  );

  it(
    'a page with display formulas comes back with formula blocks whose ' +
      'LaTeX renders, lines flagged; formulas: false reads them as text',
    async () => {
      const page = readFileSync(join(ROOT, 'test', 'fixtures', 'formula-page.png'));
      const query =
        `query($id: ID!) { parseJob(id: $id) { status markdown pages { blocks ` +
        `{ type latex markdown lines { text formula } } } } }`;
      type Tree = {
        parseJob: {
          status: string;
          markdown: string;
          pages: {
            blocks: {
              type: string;
              latex: string | null;
              markdown: string;
              lines: { text: string; formula: string | null }[];
            }[];
          }[];
        };
      };
      const read = await submit(acme, page, 'formula-page.png');
      const plain = await submit(acme, page, 'formula-page.png', { formulas: false });
      await finish(acme, read);
      await finish(acme, plain);
      const a = (await acme.query<Tree>(query, { id: read })).data?.parseJob;
      const b = (await acme.query<Tree>(query, { id: plain })).data?.parseJob;
      assert.equal(a?.status, 'SUCCEEDED');
      assert.equal(b?.status, 'SUCCEEDED');
      const blocksA = a?.pages[0].blocks ?? [];
      for (const f of blocksA.filter((x) => x.type === 'FORMULA')) {
        assert.ok(f.latex && (await latexRenders(f.latex)), `its LaTeX renders: ${f.latex}`);
        assert.equal(f.markdown, `$$\n${f.latex}\n$$`);
        assert.ok(f.lines.every((l) => l.formula === 'LATEX' && l.text === f.latex));
      }
      if (existsSync(join(DEFAULT_FORMULA_BUNDLE, 'config.json')))
        assert.ok(
          blocksA.some((x) => x.type === 'FORMULA'),
          'the shipped formula bundle finds a formula',
        );
      assert.ok(
        !(b?.pages[0].blocks ?? []).some((x) => x.type === 'FORMULA' || x.lines.some((l) => l.formula !== null)),
        'formulas: false reads every line as text',
      );
    },
  );

  it('keeps schema.graphql current (run `npm run schema` after changing the schema)', () => {
    assert.equal(readFileSync(join(ROOT, 'schema', 'schema.graphql'), 'utf8'), printedSchema());
  });

  it('an uploaded page streams tokens over SSE, and its markdown is what the CLI prints', async () => {
    const id = await submit(acme, sample, 'sample-page.png');
    const evs = events(await acme.sse<{ parseJobEvents: Event }>(EVENTS, { id }));
    assert.deepEqual(
      evs.map((e) => e.seq),
      evs.map((_, i) => i + 1),
      'numbered 1..n with no gap',
    );
    assert.ok(evs.every((e) => e.jobId === id));
    const last = evs[evs.length - 1];
    assert.equal(last.__typename, 'JobDone');
    assert.equal(last.job?.status, 'SUCCEEDED');
    const tokens = evs.filter((e) => e.__typename === 'TokenDelta');
    assert.ok(tokens.length > 10, 'tokens arrive in many deltas');
    assert.ok(
      tokens.every((t) => t.fromDraft?.length === [...(t.text as string)].length),
      'one draft flag per token',
    );
    assert.ok(evs.some((e) => e.__typename === 'PageDone') && evs.some((e) => e.__typename === 'RegionDone'));

    const job = (await acme.query<{ parseJob: Job }>(JOB, { id })).data?.parseJob as Job;
    assert.equal(job.status, 'SUCCEEDED');
    assert.equal(job.markdown, last.job?.markdown);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'bin', 'specula.js'), 'parse', SAMPLE_PAGE],
      { cwd: ROOT, maxBuffer: 1 << 24 },
    );
    assert.equal(job.markdown?.trim(), stdout.trim(), 'the API and the CLI agree');
    // The token stream spells every line of the page, in the job's reading order.
    type Tree = {
      index: number;
      scripts: { script: string; share: number }[];
      language: string | null;
      blocks: { lines: { text: string }[] }[];
    };
    const tree = await acme.query<{ parseJob: { pages: Tree[] } }>(
      `query($id: ID!) { parseJob(id: $id) { pages { index scripts { script share } language blocks { type box ` +
        `{ x y width height } lines { text confidence box { x y width height } ` +
        `} } } } }`,
      { id },
    );
    assert.equal(tree.errors, undefined, "one job's whole tree is within the cost limit");
    const page = tree.data?.parseJob.pages[0];
    assert.deepEqual([page?.scripts, page?.language], [[{ script: 'Latin', share: 1 }], 'eng'], 'an English page');
    const lines = page?.blocks.flatMap((b) => b.lines.map((l) => l.text)) ?? [];
    assert.ok(lines.length > 5);
    const spelled = spell(evs);
    assert.deepEqual(
      lines.map((_, i) => spelled.get(`${page?.index}:${i}`) ?? ''),
      lines,
    );
  });

  it(
    'half a page uploaded on its side is read upright, and the job says ' +
      'the turn it applied; a line image reads as one line',
    async () => {
      const query =
        `query($id: ID!) { parseJob(id: $id) { status markdown pages { ` + `rotation blocks { lines { text } } } } }`;
      type Tree = {
        parseJob: {
          status: string;
          markdown: string;
          pages: { rotation: number; blocks: { lines: { text: string }[] }[] }[];
        };
      };
      const meta = await sharp(sample).metadata();
      const half = await sharp(sample)
        .extract({ left: 0, top: 0, width: meta.width as number, height: Math.round((meta.height as number) * 0.5) })
        .png()
        .toBuffer();
      const upright = await submit(acme, half, 'half.png');
      await finish(acme, upright);
      const turned = await submit(acme, await sharp(half).rotate(90).png().toBuffer(), 'half-turned.png');
      await finish(acme, turned);
      const a = (await acme.query<Tree>(query, { id: upright })).data?.parseJob;
      const b = (await acme.query<Tree>(query, { id: turned })).data?.parseJob;
      assert.equal(a?.pages[0].rotation, 0);
      assert.equal(b?.status, 'SUCCEEDED');
      assert.equal(b?.pages[0].rotation, 270, 'turned a quarter clockwise, read after three quarters more');
      assert.equal(b?.markdown, a?.markdown);
      // The page's first line alone, cut tight to its ink, as a field cut from a form is uploaded.
      const [box] = findLines(await decodeImage(half, 'half.png'));
      const first = await sharp(half)
        .extract({ left: box.x, top: box.y, width: box.width, height: box.height })
        .png()
        .toBuffer();
      const line = await submit(acme, await sharp(first).trim({ threshold: 60 }).png().toBuffer(), 'line.png');
      await finish(acme, line);
      const c = (await acme.query<Tree>(query, { id: line })).data?.parseJob;
      assert.equal(c?.pages[0].blocks.flatMap((x) => x.lines).length, 1, 'one line, not split by a page layout');
      assert.equal(
        c?.pages[0].blocks[0].lines[0].text,
        a?.pages[0].blocks[0].lines[0].text,
        'and it reads as that line reads on the page',
      );
    },
  );

  it('streams the same tokens over graphql-ws, and a late subscriber gets the whole job with no gap', async () => {
    const id = await submit(acme, strip, 'strip.png');
    const live = events(await acme.ws<{ parseJobEvents: Event }>(EVENTS, { id }));
    assert.equal(live[live.length - 1].__typename, 'JobDone');
    assert.deepEqual(
      live.map((e) => e.seq),
      live.map((_, i) => i + 1),
    );
    // Resuming after the final event ends at once (nothing is left), instead of waiting forever.
    assert.deepEqual(await acme.sse(EVENTS, { id, after: live.length }), []);
    assert.deepEqual(await acme.ws(EVENTS, { id, after: 10_000 }), []);
    // Subscribing after the job ended replays it all; resuming from a seq gives exactly the rest.
    const late = events(await acme.sse<{ parseJobEvents: Event }>(EVENTS, { id }));
    assert.deepEqual(late, live);
    const mid = Math.floor(live.length / 2);
    const rest = events(await acme.ws<{ parseJobEvents: Event }>(EVENTS, { id, after: mid }));
    assert.deepEqual(rest, live.slice(mid));
    assert.ok(spell(live).size >= 1);
  });

  it('per-request decoding changes the metrics and not the text, for lossless pairings', async () => {
    const plain = await finish(
      acme,
      await submit(acme, strip, 'plain.png', { decoding: { drafter: 'NONE', verifier: 'GREEDY' } }),
    );
    const ctc = await finish(
      acme,
      await submit(acme, strip, 'ctc.png', { decoding: { drafter: 'CTC', verifier: 'GREEDY', draftLength: 8 } }),
    );
    const tree = await finish(
      acme,
      await submit(acme, strip, 'tree.png', { decoding: { drafter: 'CTC', verifier: 'TREE' } }),
    );
    const ngram = await finish(
      acme,
      await submit(acme, strip, 'ngram.png', { decoding: { drafter: 'NGRAM', verifier: 'GREEDY' } }),
    );
    for (const j of [plain, ctc, tree, ngram]) assert.equal(j.status, 'SUCCEEDED');
    assert.ok(plain.markdown && plain.markdown.length > 20);
    assert.equal(ctc.markdown, plain.markdown);
    assert.equal(tree.markdown, plain.markdown);
    assert.equal(ngram.markdown, plain.markdown);
    assert.equal(plain.metrics?.tokensPerForward, 1, 'plain greedy commits one token per forward');
    assert.equal(plain.metrics?.acceptedTokens, 0);
    assert.ok((ctc.metrics?.acceptedTokens ?? 0) > 0, 'ctc drafts are accepted');
    assert.ok(
      (ctc.metrics?.tokensPerForward ?? 0) > 1,
      `more than one token per forward (${ctc.metrics?.tokensPerForward})`,
    );
    assert.ok((ctc.metrics?.forwards ?? 0) < (plain.metrics?.forwards ?? 0), 'fewer forwards');
    const shown = async (id: string): Promise<unknown> =>
      (
        await acme.query<{ parseJob: { decoding: unknown } }>(
          `query($id: ID!) { parseJob(id: $id) { decoding { drafter verifier draftLength } } }`,
          { id },
        )
      ).data?.parseJob.decoding;
    assert.deepEqual(await shown(ctc.id), { drafter: 'CTC', verifier: 'GREEDY', draftLength: 8 }, 'what was asked for');
    const byDefault = await finish(acme, await submit(acme, strip, 'default.png'));
    assert.deepEqual(
      await shown(byDefault.id),
      { drafter: 'CTC', verifier: 'JOINT', draftLength: null },
      "the bundle's defaults",
    );
  });

  it("a tenant cannot read, list, follow or cancel another tenant's job", async () => {
    const id = await submit(globex, strip, 'globex.png');
    const read = await acme.query<{ parseJob: Job | null }>(JOB, { id });
    assert.equal(read.data?.parseJob, null);
    const list = await acme.query<{ parseJobs: { edges: { node: { id: string } }[] } }>(
      `{ parseJobs(first: 100) { edges { node { id } } } }`,
    );
    assert.equal(list.errors, undefined);
    assert.ok((list.data?.parseJobs.edges.length ?? 0) > 0, 'acme sees its own jobs');
    assert.ok(!list.data?.parseJobs.edges.some((e) => e.node.id === id), "not in the other tenant's list");
    const cancel = await acme.query<{ cancelParseJob: { __typename: string; code?: string } }>(
      `mutation($id: ID!) { cancelParseJob(id: $id) { __typename ... on Error { code message } } }`,
      { id },
    );
    assert.equal(cancel.data?.cancelParseJob.__typename, 'NotFoundError');
    assert.equal(cancel.data?.cancelParseJob.code, 'NOT_FOUND');
    const follow = await acme.sse<{ parseJobEvents: Event }>(EVENTS, { id });
    assert.deepEqual(follow.flatMap(codes), ['NOT_FOUND']);
    const own = await finish(globex, id);
    assert.equal(own.status, 'SUCCEEDED', "the owner's job was untouched");
    const mine = await globex.query<{ parseJobs: { edges: { node: { id: string } }[] } }>(
      `{ parseJobs(first: 1) { edges { node { id } } } }`,
    );
    assert.equal(mine.data?.parseJobs.edges[0].node.id, id);
  });

  it('lines of concurrent jobs share decoder batches', async () => {
    const rows: number[] = [];
    assert.ok(server.engine, 'the default role runs the engine in this process');
    const stop = server.engine.observeForwards((o) => rows.push(o.rows));
    try {
      const ids = await Promise.all([0, 1, 2, 3].map((i) => submit(acme, strip, `together-${i}.png`)));
      const jobs = await Promise.all(ids.map((id) => finish(acme, id)));
      const perJob = Math.max(...jobs.map((j) => j.metrics?.forwards ?? 0));
      const linesPerJob =
        (
          await acme.query<{ parseJob: { metrics: { lines: number } } }>(
            `query($id: ID!) { parseJob(id: $id) { metrics { lines } } }`,
            { id: ids[0] },
          )
        ).data?.parseJob.metrics.lines ?? 0;
      assert.ok(linesPerJob > 0);
      assert.ok(
        Math.max(...rows) > linesPerJob,
        `a forward held lines of several jobs (${Math.max(...rows)} lines; one job has ${linesPerJob})`,
      );
      assert.ok(
        rows.length < 4 * perJob,
        `fewer forwards than the jobs one after another (${rows.length} vs ${4 * perJob})`,
      );
    } finally {
      stop();
    }
  });

  it('lists jobs newest first, a page at a time', async () => {
    const ids = [
      await submit(globex, strip, 'a.png'),
      await submit(globex, strip, 'b.png'),
      await submit(globex, strip, 'c.png'),
    ];
    const q =
      `query($after: String) { parseJobs(first: 2, after: $after) { edges { ` +
      `cursor node { id } } pageInfo { hasNextPage endCursor } } }`;
    type Page = {
      parseJobs: { edges: { node: { id: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
    };
    const p1 = (await globex.query<Page>(q)).data as Page;
    assert.deepEqual(
      p1.parseJobs.edges.map((e) => e.node.id),
      [ids[2], ids[1]],
    );
    assert.equal(p1.parseJobs.pageInfo.hasNextPage, true);
    const p2 = (await globex.query<Page>(q, { after: p1.parseJobs.pageInfo.endCursor })).data as Page;
    assert.equal(p2.parseJobs.edges[0].node.id, ids[0]);
    // And back again: last/before pages towards newer jobs, still newest first.
    const back =
      `query($before: String) { parseJobs(last: 2, before: $before) { edges ` +
      `{ node { id } } pageInfo { hasPreviousPage hasNextPage startCursor } ` +
      `} }`;
    type Back = {
      parseJobs: {
        edges: { node: { id: string } }[];
        pageInfo: { hasPreviousPage: boolean; hasNextPage: boolean; startCursor: string };
      };
    };
    const b1 = await globex.query<Back>(back, { before: ids[0] });
    assert.equal(b1.errors, undefined, JSON.stringify(b1.errors));
    assert.deepEqual(
      b1.data?.parseJobs.edges.map((e) => e.node.id),
      [ids[2], ids[1]],
    );
    assert.deepEqual(
      b1.data?.parseJobs.pageInfo,
      { hasPreviousPage: false, hasNextPage: true, startCursor: ids[2] },
      'nothing newer than the newest',
    );
    const both = await globex.query(`{ parseJobs(first: 2, last: 2) { edges { cursor } } }`);
    assert.deepEqual(codes(both), ['BAD_USER_INPUT']);
    for (const id of ids) await finish(globex, id);
  });

  it('cancelling a running job stops it promptly and says so in its events', async () => {
    // Four pages: long enough that the cancel lands while it is decoding, however fast the model gets.
    const id = await submit(acme, pdfOfImages([sample, sample, sample, sample]), 'cancel-me.pdf');
    const seen: Event[] = [];
    const stream = acme.sse<{ parseJobEvents: Event }>(EVENTS, { id }, (p) =>
      seen.push(p.data?.parseJobEvents as Event),
    );
    while (!seen.some((e) => e.__typename === 'TokenDelta')) await new Promise((r) => setTimeout(r, 20));
    const r = await acme.query<{ cancelParseJob: { __typename: string; status?: string } }>(
      `mutation($id: ID!) { cancelParseJob(id: $id) { __typename ... on ParseJob { status } } }`,
      { id },
    );
    assert.equal(r.data?.cancelParseJob.status, 'CANCELLED');
    const evs = events(await stream);
    assert.equal(evs[evs.length - 1].__typename, 'JobCancelled');
    const job = (await acme.query<{ parseJob: Job }>(JOB, { id })).data?.parseJob as Job;
    assert.equal(job.status, 'CANCELLED');
    assert.equal(job.markdown, null);
  });

  it('bad input gets a typed error and the server keeps serving', async () => {
    // Oversized: refused from its declared length, before the body is read.
    const big = new Uint8Array(3 * 1024 * 1024);
    const oversized = await acme.upload(CREATE, { input: { file: null } }, ['input', 'file'], big, 'big.png');
    assert.equal(oversized.status, 413);
    assert.deepEqual(codes(oversized), ['UPLOAD_TOO_LARGE']);
    const b64 = await acme.query(CREATE, { input: { base64: Buffer.from(big).toString('base64') } });
    assert.deepEqual(codes(b64), ['UPLOAD_TOO_LARGE']);
    // Corrupt: accepted, then the job fails with the document's typed error.
    const corrupt = await submit(acme, sample.subarray(0, sample.length >> 2), 'broken.png');
    const failed = await finish(acme, corrupt);
    assert.equal(failed.status, 'FAILED');
    assert.equal(failed.error?.code, 'CORRUPT_IMAGE');
    const huge = await finish(acme, await submit(acme, hugePngHeader(200_000, 200_000), 'huge.png'));
    assert.equal(huge.error?.code, 'IMAGE_TOO_LARGE');
    // Unknown drafter: refused at once by the schema's enum (the engine query lists the choices).
    const drafter = await acme.upload(
      CREATE,
      { input: { file: null, decoding: { drafter: 'MEDUSA' } } },
      ['input', 'file'],
      strip,
      'x.png',
    );
    assert.equal(drafter.data ?? null, null);
    assert.match(drafter.errors?.[0].message ?? '', /"MEDUSA" does not exist in "Drafter" enum/);
    const noReference = await acme.query(CREATE, {
      input: { base64: strip.toString('base64'), decoding: { drafter: 'REFERENCE', reference: '  ' } },
    });
    assert.deepEqual(codes(noReference), ['INVALID_DECODING']);
    assert.match(noReference.errors?.[0].message ?? '', /decoding\.reference/);
    const length = await acme.query(CREATE, {
      input: { base64: strip.toString('base64'), decoding: { draftLength: 500 } },
    });
    assert.deepEqual(codes(length), ['INVALID_DECODING']);
    const pages = await acme.query(CREATE, { input: { base64: strip.toString('base64'), pages: 'two to four' } });
    assert.deepEqual(codes(pages), ['INVALID_PAGE_RANGE']);
    const twoWays = await acme.query(CREATE, { input: { base64: 'AAAA', url: 'https://example.com/a.pdf' } });
    assert.deepEqual(codes(twoWays), ['BAD_USER_INPUT']);
    const url = await acme.query(CREATE, { input: { url: 'https://example.com/a.pdf' } });
    assert.deepEqual(codes(url), ['URL_INPUT_DISABLED']);
    // Introspection may nest as deep as codegen asks (the depth limit leaves it alone), not without bound: a
    // hostile nest is refused before the parser, which recurses per level, can overflow its stack (INTERNAL).
    let deep = 'name';
    for (let i = 0; i < 16; i++) deep = `ofType { ${deep} }`;
    assert.equal((await acme.query(`{ __schema { types { fields { type { ${deep} } } } } }`)).errors, undefined);
    for (let i = 0; i < 3000; i++) deep = `ofType { ${deep} }`;
    const hostile = await acme.query(`{ __schema { types { fields { type { ${deep} } } } } }`);
    assert.deepEqual(codes(hostile), ['QUERY_TOO_DEEP']);
    assert.match(hostile.errors?.[0].message ?? '', /nests 3021 levels/);
    assert.equal(hostile.data ?? null, null);
    const aliases = await acme.query(
      `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: engine { stats { forwards } }`).join(' ')} }`,
    );
    assert.deepEqual(codes(aliases), ['QUERY_TOO_COMPLEX'], 'too many aliases');
    const fileAsValue = await acme.query(CREATE, { input: { file: 'not-a-file' } });
    assert.deepEqual(codes(fileAsValue), ['BAD_USER_INPUT'], 'a File scalar sent as a plain value');
    const costly = await acme.query(
      `{ parseJobs(first: 100) { edges { node { pages { blocks { lines { text box { x y } } } } } } } }`,
    );
    assert.deepEqual(codes(costly), ['QUERY_TOO_COMPLEX'], 'a query that could fan out over every line of 100 jobs');
    const garbage = await acme.query('{ parseJob(id: ');
    assert.ok(garbage.errors?.length);
    // And the server still serves real work.
    const ok = await finish(acme, await submit(acme, strip, 'after.png'));
    assert.equal(ok.status, 'SUCCEEDED');
  });

  it('an idempotency key makes a retried create return the first job; keys are per tenant', async () => {
    const key = `k-${Date.now()}`;
    const a = await submit(acme, strip, 'idem.png', { idempotencyKey: key });
    const b = await submit(acme, strip, 'idem.png', { idempotencyKey: key });
    assert.equal(b, a);
    assert.notEqual(await submit(acme, strip, 'idem.png', { idempotencyKey: `${key}-2` }), a);
    assert.notEqual(
      await submit(globex, strip, 'idem.png', { idempotencyKey: key }),
      a,
      "another tenant's key is its own",
    );
    const long = await acme.query(CREATE, {
      input: { base64: strip.toString('base64'), idempotencyKey: 'x'.repeat(201) },
    });
    assert.deepEqual(codes(long), ['BAD_USER_INPUT']);
  });

  it(
    'standard introspection (getIntrospectionQuery, as codegen, Postman ' + 'and GraphiQL send it) passes the limits',
    async () => {
      const r = await acme.query<{ __schema: { types: { name: string }[] } }>(getIntrospectionQuery());
      assert.equal(r.errors, undefined, JSON.stringify(r.errors));
      assert.ok(r.data?.__schema.types.some((t) => t.name === 'ParseJob'));
    },
  );

  it('examples/client.mjs, as the README runs it, shows each line whole and in order, then the markdown', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'examples', 'client.mjs'), SAMPLE_PAGE, 'ctc'],
      {
        cwd: ROOT,
        env: { ...process.env, SPECULA_URL: base, SPECULA_KEY: 'key-acme-1' },
        maxBuffer: 1 << 24,
      },
    );
    const id = /job (\S+)/.exec(stderr)?.[1] as string;
    const job = (
      await acme.query<{ parseJob: { markdown: string; pages: { blocks: { lines: { text: string }[] }[] }[] } }>(
        `query($id: ID!) { parseJob(id: $id) { markdown pages { blocks { lines { text } } } } }`,
        { id },
      )
    ).data?.parseJob;
    assert.equal(stdout.trim(), job?.markdown.trim(), 'the markdown on stdout');
    // eslint-disable-next-line no-control-regex
    const shown = stderr.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split('\n');
    const read = job?.pages[0].blocks.flatMap((b) => b.lines.map((l) => l.text)) ?? [];
    const start = shown.indexOf(read[0]);
    assert.ok(start >= 0, 'the first line appears whole');
    assert.deepEqual(
      shown.slice(start, start + read.length),
      read,
      'every line whole, in reading order, not interleaved fragments',
    );
  });

  it('bytes of no supported format are refused at submission with UNSUPPORTED_FORMAT, and no job is kept', async () => {
    const NEWEST = `{ parseJobs(first: 1) { edges { node { id } } } }`;
    const newest = async (): Promise<string | undefined> => {
      const r = await acme.query<{ parseJobs: { edges: { node: { id: string } }[] } }>(NEWEST);
      return r.data?.parseJobs.edges[0]?.node.id;
    };
    const newestBefore = await newest();
    const text = await acme.upload(CREATE, { input: { file: null } }, ['input', 'file'], Buffer.from('notes'), 'a.png');
    assert.deepEqual(codes(text), ['UNSUPPORTED_FORMAT']);
    assert.equal(text.data?.createParseJob ?? null, null);
    // A PNG whose signature is lost reads as nothing at all, by base64 as by upload.
    const headless = Buffer.concat([Buffer.from('GARBAGE!'), strip.subarray(8)]);
    const b64 = await acme.query(CREATE, { input: { base64: headless.toString('base64'), fileName: 'strip.png' } });
    assert.deepEqual(codes(b64), ['UNSUPPORTED_FORMAT']);
    assert.match(b64.errors?.[0].message ?? '', /PDF, PNG, JPEG/, 'the message names the formats read');
    assert.equal(await newest(), newestBefore, 'nothing was queued');
  });

  it(
    'a refused 28 MiB upload gets its status (401 with a wrong key, 413 ' + 'over the limit), not a broken pipe',
    async () => {
      // Node's fetch writes the whole body: a server that answers and closes mid-upload leaves it with EPIPE.
      const big = new Uint8Array(28 * 1024 * 1024);
      const wrongKey = await new ApiClient(base, 'not-a-key').upload(
        CREATE,
        { input: { file: null } },
        ['input', 'file'],
        big,
        'big.png',
      );
      assert.equal(wrongKey.status, 401);
      assert.deepEqual(codes(wrongKey), ['UNAUTHENTICATED']);
      const tooBig = await acme.upload(CREATE, { input: { file: null } }, ['input', 'file'], big, 'big.png');
      assert.equal(tooBig.status, 413);
      assert.deepEqual(codes(tooBig), ['UPLOAD_TOO_LARGE']);
    },
  );

  it('needs an API key, and refuses multipart without the CSRF header', async () => {
    const anon = new ApiClient(base);
    const refused = await anon.query('{ engine { stats { forwards } } }');
    assert.equal(refused.status, 401);
    assert.deepEqual(codes(refused), ['UNAUTHENTICATED']);
    const anonSse = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: EVENTS, variables: { id: 'x' } }),
    });
    assert.equal(anonSse.status, 401, 'a keyless subscription is refused before it starts');
    assert.deepEqual(codes(await new ApiClient(base, 'wrong').query(JOB, { id: 'x' })), ['UNAUTHENTICATED']);
    await assert.rejects(anon.ws(EVENTS, { id: 'x' }), 'graphql-ws refuses a keyless connection');
    const noCsrf = await acme.upload(CREATE, { input: { file: null } }, ['input', 'file'], strip, 'x.png', false);
    assert.equal(noCsrf.status, 403);
  });

  it('reports the engine, health, readiness and Prometheus metrics', async () => {
    const r = await acme.query<{
      engine: {
        models: { name: string; heads: string[]; precision: string }[];
        strategies: { drafters: { name: string; available: boolean }[]; verifiers: { name: string }[] };
        stats: { forwards: number; tokensPerForward: number };
      };
    }>(
      `{ engine { models { name heads precision } strategies { drafters { ` +
        `name available } verifiers { name } } stats { forwards ` +
        `tokensPerForward } } }`,
    );
    const e = r.data?.engine;
    assert.equal(e?.models[0].name, 'specula-line-base');
    assert.equal(e?.models[0].precision, 'int8', 'a CPU server runs the int8 vision graph by default');
    assert.deepEqual(
      e?.strategies.verifiers.map((v) => v.name),
      ['GREEDY', 'TREE', 'RELAXED', 'JOINT'],
    );
    assert.equal(e?.strategies.drafters.find((d) => d.name === 'CTC')?.available, true);
    assert.deepEqual(
      e?.strategies.drafters.filter((d) => !d.available).map((d) => d.name),
      [],
      'the shipped bundle runs every drafter',
    );
    assert.ok((e?.stats.forwards ?? 0) > 0 && (e?.stats.tokensPerForward ?? 0) >= 1);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'specula_jobs_finished_total{status="succeeded"}',
      'specula_queue_depth',
      'specula_decoder_tokens_per_forward_bucket',
      'specula_decoder_forward_seconds_bucket',
      // the process's own, named once (not specula_process_process_*), and GraphQL requests by yoga's plugin
      'specula_process_cpu_seconds_total',
      'specula_nodejs_heap_size_used_bytes',
      'graphql_yoga_http_duration_bucket',
      'graphql_envelop_request_duration_bucket',
    ]) {
      assert.ok(metrics.includes(name), name);
    }
    assert.doesNotMatch(metrics, /specula_process_process_/);
  });
});
