/** `specula parse FILE...`: print each page's text (a progress bar on a terminal for several files). */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { Precision } from '../engine/bundle/bundle.js';
import { type DeviceChoice, parseDeviceChoice } from '../engine/bundle/device.js';
import { Engine } from '../engine/engine.js';
import type { DecodingOptions } from '../engine/strategies/options.js';
import { isWordFormat, renderWordFormat, WORD_FORMAT_TYPES, WORD_FORMATS } from '../document/formats/index.js';
import { DEFAULT_SOURCE_LIMITS } from '../document/source.js';
import { SOFTWARE_NAME, softwareVersion } from '../version.js';
import { FormulaReader } from '../worker/formula-reader.js';
import { type DocumentReading, readDocument } from '../worker/read-document.js';
import { type OutputFormat, resolveReading } from '../options/reading-options.js';
import { decodingFlags, decodingFromFlags } from './decoding-flags.js';
import { readingFlags, readingFromFlags } from './reading-flags.js';
import { plainError } from './plain-error.js';

/**
 * Documents read at once. Two keep both cores busy (one's layout beside another's vision pass and decoder
 * steps); a third covers a small document that finishes early. More only holds more pages in memory.
 */
const DOCUMENTS_AHEAD = 3;

/** The command line as parseArgs reads it, with the reading and decoding flags. */
function parseFlags(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: 'string' },
      device: { type: 'string' }, // absent: SPECULA_DEVICE, else cpu
      precision: { type: 'string' }, // absent: int8 on CPU where the bundle has it
      // onnxruntime intra-op threads for the decoder; absent: SPECULA_THREADS, else half the cores
      threads: { type: 'string' },
      batch: { type: 'string' }, // lines per decoder forward; absent: SPECULA_MAX_BATCH, else the engine's default
      json: { type: 'boolean', default: false },
      format: { type: 'string', default: 'markdown' },
      'formula-model': { type: 'string' }, // absent: the shipped formula bundle; "none": formulas read as text
      out: { type: 'string' },
      ...readingFlags(),
      ...decodingFlags(), // absent: the engine's defaults
    },
  });
}

type ParseFlags = ReturnType<typeof parseFlags>['values'];

/** The file name extension of an output format, for files written under --out. */
function extensionOf(format: string): string {
  return isWordFormat(format)
    ? WORD_FORMAT_TYPES[format].extension
    : format === 'markdown'
      ? 'md'
      : format === 'json'
        ? 'json'
        : 'txt';
}

/**
 * The line engine, opened with the flags' precision, threads and batch, and the formula reader beside it (null
 * where formulas are read as text).
 */
async function openReaders(
  values: ParseFlags,
  device: DeviceChoice,
  readFormulas: boolean,
): Promise<{ engine: Engine; formulas: FormulaReader | null }> {
  const threads = Number(values.threads ?? process.env.SPECULA_THREADS ?? 0);
  if (!Number.isInteger(threads) || threads < 0)
    throw new Error(`--threads must be a whole number (0: half the cores), got "${values.threads}"`);
  const batch = Number(values.batch ?? process.env.SPECULA_MAX_BATCH ?? 0);
  if (!Number.isInteger(batch) || batch < 0)
    throw new Error(`--batch must be a whole number (0: the engine's default), got "${values.batch}"`);
  const engine = await Engine.open(values.model, {
    device,
    ...(values.precision ? { precision: values.precision as Precision } : {}),
    ...(threads ? { threads } : {}),
    ...(batch ? { maxBatch: batch } : {}),
  });
  if (device === 'auto')
    process.stderr.write(`specula: device ${engine.bundle.device} (${engine.bundle.deviceReason})\n`);
  // The formula bundle opens on the device the line bundle took (auto decides once).
  const engineOpts = {
    device: engine.bundle.device,
    ...(values.precision ? { precision: values.precision as Precision } : {}),
    ...(threads ? { threads } : {}),
    ...(batch ? { maxBatch: batch } : {}),
  };
  const formulaModel = readFormulas ? values['formula-model'] : 'none';
  const formulas =
    formulaModel === 'none'
      ? null
      : formulaModel
        ? new FormulaReader(formulaModel, engineOpts)
        : FormulaReader.shipped(engineOpts);
  return { engine, formulas };
}

/** A progress bar over the files on stderr, where there are several and stderr is a terminal. */
function filesBar(files: number): cliProgress.SingleBar | null {
  return files > 1 && process.stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: 'parse [{bar}] {value}/{total} files | {file}', stream: process.stderr },
        cliProgress.Presets.shades_classic,
      )
    : null;
}

/** The --format json document: the reading, the decoder's metrics and each stage's milliseconds. */
function jsonOutput(file: string, page: DocumentReading): string {
  const m = page.metrics;
  const metrics = {
    forwards: m.forwards,
    drafts: m.drafts,
    draftTokens: m.draftTokens,
    acceptedTokens: m.acceptedTokens,
    meanAcceptanceLength: m.meanAcceptanceLength,
    acceptanceByPosition: m.acceptanceByPosition,
    decodeMs: m.decodeMs,
    draftMs: m.draftMs,
    visionMs: m.visionMs,
    lines: m.lines,
    committedTokens: m.committedTokens,
    sequenceForwards: m.sequenceForwards,
    visualTokenRatio: m.visualTokenRatio,
  };
  const stages = Object.fromEntries(Object.entries(page.stages).map(([k, v]) => [k, Math.round(v)]));
  return (
    JSON.stringify({
      file,
      format: page.format,
      pageCount: page.pageCount,
      markdown: page.markdown,
      text: page.text,
      unreadableLines: page.unreadableLines,
      metrics,
      stagesMs: stages,
      pages: page.pages,
    }) + '\n'
  );
}

/** One document's reading in the format asked for: a word-level rendering, JSON, plain text or markdown. */
async function renderOutput(
  format: string,
  file: string,
  bytes: Uint8Array,
  page: DocumentReading,
): Promise<string | Uint8Array> {
  if (isWordFormat(format)) {
    return await renderWordFormat(format, {
      bytes,
      fileName: basename(file),
      format: page.format,
      pages: page.pages,
      pdfDpi: DEFAULT_SOURCE_LIMITS.pdfDpi,
      software: { name: SOFTWARE_NAME, version: softwareVersion() },
    });
  }
  if (format === 'json') return jsonOutput(file, page);
  return (format === 'text' ? page.text : page.markdown) + '\n';
}

/** Where one document's output goes: --out (a file in that folder for several files), else stdout. */
async function writeOutput(
  output: string | Uint8Array,
  file: string,
  files: number,
  where: { out: string | undefined; format: string; extension: string },
): Promise<void> {
  if (where.out) {
    await writeFile(files > 1 ? join(where.out, `${basename(file)}.${where.extension}`) : where.out, output);
  } else {
    if (files > 1 && where.format !== 'json') process.stdout.write(`==> ${file} <==\n`);
    process.stdout.write(output);
  }
}

export async function parseCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv);
  if (!positionals.length) throw new Error('give at least one FILE to parse');
  const format = values.json ? 'json' : values.format;
  const formats = ['markdown', 'json', 'text', ...WORD_FORMATS];
  if (!formats.includes(format))
    throw new Error(`--format must be ${formats.slice(0, -1).join(', ')} or ${formats.at(-1)}, got "${values.format}"`);
  if (format === 'pdf' && !values.out)
    throw new Error('--format pdf writes a binary file: give --out FILE.pdf (a folder for several files)');
  // Checked before the model opens; word boxes (an alignment per line) only where the format shows them.
  const reading = resolveReading({ ...readingFromFlags(values), formats: [format as OutputFormat] });
  const out = values.out;
  if (out && positionals.length > 1) await mkdir(out, { recursive: true });
  const extension = extensionOf(format);
  const device = parseDeviceChoice(
    values.device ?? process.env.SPECULA_DEVICE ?? 'cpu',
    values.device ? '--device' : 'SPECULA_DEVICE',
  );
  const flags = await decodingFromFlags(values);
  const { engine, formulas } = await openReaders(values, device, reading.formulas);
  let decoding: DecodingOptions;
  try {
    decoding = engine.resolve(flags); // once, for every document: bad options are refused before reading anything
  } catch (e) {
    await engine.close();
    throw e;
  }
  const bar = filesBar(positionals.length);
  bar?.start(positionals.length, 0, { file: '' });
  let failed = 0;
  // Several documents are read at once (their pages' layout, vision passes and decoder steps overlap on the
  // cores, and their lines share decoder batches); each is printed, in the order given, once it is read.
  const reads: Promise<{ bytes: Uint8Array; page: DocumentReading }>[] = [];
  const start = (i: number): void => {
    const file = positionals[i];
    const p = readFile(file).then(async (bytes) => ({
      bytes,
      page: await readDocument(engine, bytes, file, { ...reading, decoding, formulas }),
    }));
    p.catch(() => undefined); // handled in order below
    reads[i] = p;
  };
  try {
    for (let i = 0; i < Math.min(DOCUMENTS_AHEAD, positionals.length); i++) start(i);
    for (let i = 0; i < positionals.length; i++) {
      const file = positionals[i];
      bar?.update({ file });
      try {
        const { bytes, page } = await reads[i];
        const output = await renderOutput(format, file, bytes, page);
        await writeOutput(output, file, positionals.length, { out, format, extension });
        // Whatever the format, a page that could not be read well says so where a person looks.
        for (const p of page.pages)
          for (const w of p.warnings ?? [])
            console.error(`specula parse: warning: ${file} page ${p.index}: ${w.message} (${w.kind})`);
      } catch (e) {
        const err = e as Error & { code?: string };
        if (!err.code) throw e;
        failed++;
        console.error(`specula parse: ${plainError(err, 'parse')}`);
      } finally {
        delete reads[i]; // a read document's pages are not held longer than it takes to print them
      }
      if (i + DOCUMENTS_AHEAD < positionals.length) start(i + DOCUMENTS_AHEAD);
      bar?.increment();
    }
  } finally {
    await Promise.allSettled(reads.filter(Boolean));
    bar?.stop();
    await engine.close();
    await formulas?.close();
  }
  return failed ? 1 : 0;
}
