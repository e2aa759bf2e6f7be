/**
 * createParseJob: take the document (an upload, base64 bytes, or a URL when that is switched on), refuse what
 * cannot work before anything is queued (size, page-range syntax and count, decoding options, bytes of no
 * supported format), then submit. Whether bytes of a supported format read as a document is the worker's to find
 * out: that failure is the job's, typed.
 */
import { sniffFormat, unsupportedFormat } from '../document/sniff.js';
import type { DecodingOptionsInput } from '../engine/strategies/options.js';
import type { JobRecord } from '../jobs/job-record.js';
import {
  READING_OPTIONS,
  type ReadingOptions,
  type ReadingOptionsInput,
  ReadingOptionsError,
  resolveReading,
} from '../options/reading-options.js';
import type { RequestContext, TenantContext } from './context.js';
import { apiError } from './errors.js';

/** The GraphQL decoding input (its shape derived from the engine's registry), nulls and all. */
export type DecodingArgs = { readonly [key: string]: string | number | DecodingArgs | null | undefined };

/** The input as GraphQL gives it: the document, how to decode, and the reading options by their API names. */
export interface CreateParseJobArgs {
  file?: File | null;
  base64?: string | null;
  url?: string | null;
  fileName?: string | null;
  decoding?: DecodingArgs | null;
  idempotencyKey?: string | null;
  readonly [readingOption: string]: unknown;
}

/** The reading options among the arguments, under their own names (`characters` is `chars`). */
function readingArgs(args: CreateParseJobArgs): ReadingOptionsInput {
  const named = Object.entries(READING_OPTIONS).map(([key, spec]) => [key, args['api' in spec ? spec.api : key]]);
  return Object.fromEntries(named) as ReadingOptionsInput;
}

/** The reading options resolved once, here; a page range is checked for syntax and size too. */
function resolveArgs(args: CreateParseJobArgs, maxPages: number): ReadingOptions {
  let reading: ReadingOptions;
  try {
    reading = resolveReading(readingArgs(args));
  } catch (e) {
    if (e instanceof ReadingOptionsError)
      throw apiError(e.option === 'pages' ? 'INVALID_PAGE_RANGE' : 'BAD_USER_INPUT', e.message);
    throw e;
  }
  const pages = reading.pages;
  if (pages === undefined) return reading;
  if (!PAGE_RANGE.test(pages))
    throw apiError('INVALID_PAGE_RANGE', `page range "${pages}" is not of the form "0,2-4" (0-based page numbers)`);
  const n = countRangePages(pages);
  if (n > maxPages)
    throw apiError('TOO_MANY_PAGES', `the range asks for ${n} pages; at most ${maxPages} per job`, { limit: maxPages });
  return reading;
}

const PAGE_RANGE = /^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Pages a range names (syntax only; whether they exist is known once the document is open). */
export function countRangePages(spec: string): number {
  let n = 0;
  for (const part of spec.split(',')) {
    const [a, b] = part.split('-').map((x) => Number(x.trim()));
    if (b !== undefined && b < a) throw apiError('INVALID_PAGE_RANGE', `page range "${part.trim()}" runs backwards`);
    n += b === undefined ? 1 : b - a + 1;
  }
  return n;
}

/** GraphQL's explicit nulls mean "not given", as absent keys do for the engine. */
export function toDecodingInput(d: DecodingArgs | null | undefined): DecodingOptionsInput | undefined {
  if (!d) return undefined;
  const strip = (o: DecodingArgs): DecodingArgs =>
    Object.fromEntries(
      Object.entries(o)
        .filter(([, v]) => v != null)
        .map(([k, v]) => [k, typeof v === 'object' && v ? strip(v) : v]),
    );
  return strip(d) as DecodingOptionsInput;
}

async function readInput(
  args: CreateParseJobArgs,
  ctx: RequestContext,
): Promise<{ bytes: Uint8Array; fileName: string; source: 'upload' | 'base64' | 'url' }> {
  const given = [args.file, args.base64, args.url].filter((x) => x != null).length;
  if (given !== 1)
    throw apiError('BAD_USER_INPUT', 'give the document exactly one way: file (a multipart upload), base64, or url');
  const max = ctx.limits.uploadBytes;
  const tooLarge = (size: number): Error =>
    apiError('UPLOAD_TOO_LARGE', `the document is ${size} bytes; the limit is ${max}`, { limit: max, size });
  if (args.file) {
    if (args.file.size > max) throw tooLarge(args.file.size);
    return {
      bytes: new Uint8Array(await args.file.arrayBuffer()),
      fileName: args.fileName ?? (args.file.name || 'upload').slice(0, 255),
      source: 'upload',
    };
  }
  if (args.base64 != null) {
    const b64 = args.base64.replace(/^data:[^,]*;base64,/, '').replace(/\s+/g, '');
    if (Math.floor((b64.length * 3) / 4) > max + 2) throw tooLarge(Math.floor((b64.length * 3) / 4));
    if (!BASE64.test(b64)) throw apiError('BAD_USER_INPUT', 'base64 holds characters that are not base64');
    return {
      bytes: new Uint8Array(Buffer.from(b64, 'base64')),
      fileName: args.fileName ?? 'document',
      source: 'base64',
    };
  }
  if (!ctx.fetchUrl)
    throw apiError(
      'URL_INPUT_DISABLED',
      'URL input is switched off on this server (SPECULA_URL_INPUT=1 turns ' +
        'it on); upload the file or send it as base64',
    );
  const got = await ctx.fetchUrl(args.url as string, max);
  return { ...got, fileName: args.fileName ?? got.fileName, source: 'url' };
}

export async function createParseJob(args: CreateParseJobArgs, ctx: TenantContext): Promise<JobRecord> {
  const { tenant } = ctx;
  // Resolved once, here: the job keeps the options it will be read with (and reports them from there).
  const { options: decoding, error } = ctx.engine.resolveDecoding(toDecodingInput(args.decoding));
  if (error !== undefined) throw apiError('INVALID_DECODING', error, { choices: ctx.engine.strategies() });
  const reading = resolveArgs(args, ctx.limits.pages);
  const active = await ctx.jobs.countActive(tenant);
  if (active >= ctx.limits.activeJobs) {
    throw apiError(
      'TOO_MANY_JOBS',
      `you have ${active} jobs queued or running; at most ` +
        `${ctx.limits.activeJobs} at once. Wait for some to finish, or cancel ` +
        `some`,
      { limit: ctx.limits.activeJobs },
    );
  }
  const { bytes, fileName, source } = await readInput(args, ctx);
  if (bytes.length === 0) throw apiError('EMPTY_INPUT', 'the document is empty (0 bytes)');
  // The first bytes, as the worker and the CLI sniff them: what none of them can open is refused before it is kept.
  if (sniffFormat(bytes) === null) throw apiError('UNSUPPORTED_FORMAT', unsupportedFormat('document'));
  return ctx.jobs.submit(
    tenant,
    { fileName, size: bytes.length, source, ...reading, decoding },
    bytes,
    args.idempotencyKey ?? undefined,
  );
}
