/** `specula parse FILE...`: print each page's text (a progress bar on a terminal for several files). */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { Device } from '../engine/bundle.js';
import { Engine } from '../engine/engine.js';
import type { DecodingOptionsInput } from '../engine/options.js';
import { readDocument } from '../worker/read-document.js';

export async function parseCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: 'string' },
      device: { type: 'string', default: 'cpu' },
      json: { type: 'boolean', default: false },
      format: { type: 'string', default: 'markdown' },
      'drop-headers': { type: 'boolean', default: false },
      pages: { type: 'string' },
      drafter: { type: 'string' }, // absent: the engine's default (lossless ctc)
      verifier: { type: 'string' }, // absent: the engine's default (joint)
      'draft-length': { type: 'string', default: 'auto' },
      'top-k': { type: 'string' },
      'min-ratio': { type: 'string' },
      'ctc-weight': { type: 'string' },
      reference: { type: 'string' },
      'visual-keep': { type: 'string' },
    },
  });
  if (!positionals.length) throw new Error('give at least one FILE to parse');
  const format = values.json ? 'json' : values.format;
  if (!['markdown', 'json', 'text'].includes(format)) throw new Error(`--format must be markdown, json or text, got "${values.format}"`);
  const device = values.device as Device;
  if (device !== 'cpu' && device !== 'cuda') throw new Error(`--device must be cpu or cuda, got "${values.device}"`);
  const dl = values['draft-length'];
  const decoding: DecodingOptionsInput = {
    drafter: values.drafter,
    verifier: values.verifier,
    draftLength: dl === 'auto' ? 'auto' : Number(dl),
    relaxed: {
      ...(values['top-k'] ? { topK: Number(values['top-k']) } : {}),
      ...(values['min-ratio'] ? { minRatio: Number(values['min-ratio']) } : {}),
    },
    ...(values['ctc-weight'] ? { joint: { ctcWeight: Number(values['ctc-weight']) } } : {}),
    ...(values.reference ? { reference: await readFile(values.reference, 'utf8') } : {}),
    ...(values['visual-keep'] ? { visualTokens: { keep: Number(values['visual-keep']) } } : {}),
  };
  const engine = await Engine.open(values.model, { device });
  try {
    engine.resolve(decoding); // refuse bad options before reading anything
  } catch (e) {
    await engine.close();
    throw e;
  }
  const bar = positionals.length > 1 && process.stderr.isTTY
    ? new cliProgress.SingleBar({ format: 'parse [{bar}] {value}/{total} files | {file}', stream: process.stderr }, cliProgress.Presets.shades_classic)
    : null;
  bar?.start(positionals.length, 0, { file: '' });
  let failed = 0;
  try {
    for (const file of positionals) {
      bar?.update({ file });
      try {
        const page = await readDocument(engine, await readFile(file), file, { decoding, pages: values.pages, dropHeadersFooters: values['drop-headers'] });
        if (format === 'json') {
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
          };
          console.log(JSON.stringify({ file, format: page.format, pageCount: page.pageCount, markdown: page.markdown, text: page.text, metrics, pages: page.pages }));
        } else {
          if (positionals.length > 1) console.log(`==> ${file} <==`);
          console.log(format === 'text' ? page.text : page.markdown);
        }
      } catch (e) {
        const err = e as Error & { code?: string };
        if (!err.code) throw e;
        failed++;
        console.error(`specula parse: [${err.code}] ${err.message}`);
      }
      bar?.increment();
    }
  } finally {
    bar?.stop();
    await engine.close();
  }
  return failed ? 1 : 0;
}
