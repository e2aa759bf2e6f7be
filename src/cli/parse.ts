/** `specula parse FILE...`: print each page's text (a progress bar on a terminal for several files). */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { Device } from '../engine/bundle.js';
import { Engine } from '../engine/engine.js';
import { readPage } from '../worker/read-page.js';

export async function parseCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: 'string' },
      device: { type: 'string', default: 'cpu' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!positionals.length) throw new Error('give at least one FILE to parse');
  const device = values.device as Device;
  if (device !== 'cpu' && device !== 'cuda') throw new Error(`--device must be cpu or cuda, got "${values.device}"`);
  const engine = await Engine.open(values.model, { device });
  const bar = positionals.length > 1 && process.stderr.isTTY
    ? new cliProgress.SingleBar({ format: 'parse [{bar}] {value}/{total} files | {file}', stream: process.stderr }, cliProgress.Presets.shades_classic)
    : null;
  bar?.start(positionals.length, 0, { file: '' });
  let failed = 0;
  try {
    for (const file of positionals) {
      bar?.update({ file });
      try {
        const page = await readPage(engine, await readFile(file), file);
        if (values.json) {
          console.log(JSON.stringify({ file, text: page.text, lines: page.lines, metrics: page.metrics }));
        } else {
          if (positionals.length > 1) console.log(`==> ${file} <==`);
          console.log(page.text);
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
