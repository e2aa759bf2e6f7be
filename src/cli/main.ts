/** `specula <command>`: parse documents, serve the API, check a bundle, evaluate. */
// First: V8's tiering flag is set before any command's modules load (tiering.ts).
import './tiering.js';
import module from 'node:module';
import { softwareVersion } from '../version.js';
import { commandArgs, rerunWithArgsFile } from './long-args.js';
import { plainError } from './plain-error.js';

const HELP: Record<string, string> = {
  parse: `usage: specula parse FILE... [options]
  Reads documents (PDF, PNG, JPEG, TIFF, WebP, GIF, BMP) and prints each one's markdown, in the order given.
  An image of one line of text is read as that line; pages turned a quarter or half round are read upright.

  --format markdown|json|text   what to print (default markdown); --json is --format json
  --format hocr|alto|tsv|pdf    word boxes: hOCR 1.2, ALTO 4, tesseract's TSV, or a searchable PDF (needs --out)
  --out PATH                    write there instead of printing (several files: a folder, one output per file)
{reading}
  --formula-model DIR           the formula bundle (default models/specula-formula-base)
  --model DIR                   a model bundle (default models/specula-line-base)
  --device cpu|webgpu|cuda|auto where the model runs (default SPECULA_DEVICE, else cpu): webgpu is any GPU
                                through Vulkan, cuda needs onnxruntime's CUDA provider, auto takes a GPU where one
                                answers and says which; a device asked for and absent is an error
  --precision int8|fp32         the vision graph (default int8 on CPU where the bundle has it)
  --threads N                   onnxruntime threads for the decoder (default SPECULA_THREADS, else half the cores)
  --batch N                     lines per decoder forward (default SPECULA_MAX_BATCH, else 8 on CPU, 32 on a GPU)
{decoding}`,
  eval: `usage: specula eval [options]
  CER of our model and of tesseract on the evaluation line sets, NED and olmOCR facts on its page sets.

  --eval-dir DIR                the evaluation folder (default SPECULA_EVAL_DIR, else ../shared/eval)
  --suite lines|pages|all       (default all)
  --sets a,b                    only these sets
  --line-dir DIR[,DIR]          line images listed in DIR/labels.tsv (image<TAB>text), e.g. training/pdf_lines.py's
                                held-out pool or bench/european-lines.py's languages (tesseract with the pack
                                DIR/meta.json names); scored alone unless --sets names others too
  --limit N                     at most N lines or pages per set
  --batch N                     lines per decoder forward (default the engine's: 8 on CPU, 32 on a GPU)
  --out FILE                    the JSON report (default eval-results/eval.json)
  --no-tesseract                ours only
  --write-config                record the float model's accuracy in the bundle's config.json
  --precision int8|fp32         the vision graph
  --turn 0|90|180|270           pages turned clockwise before reading (ours and tesseract's)
  our decoding (the engine's defaults, but the greedy verifier: the model's own accuracy):
{decoding:greedy}`,
  'check-bundle': `usage: specula check-bundle [DIR] [--device cpu|webgpu|cuda]
  Runs a bundle's graphs under onnxruntime against its golden.json, for each precision it ships on that device.`,
  serve: `usage: specula serve [--role all|api|worker]
  The GraphQL API on PORT (default 4000); settings from the environment (see docs/deploy.md).`,
};

const USAGE = `usage: specula <command> [options]    (specula <command> --help for its options)

  parse FILE...    read documents, print markdown, text or JSON
  serve            the GraphQL API (and its workers)
  eval             accuracy and speed on the evaluation sets, beside tesseract
  check-bundle     a model bundle against its golden outputs

  --version        the version`;

// Node 22.1+ keeps V8's compiled code of every module loaded after this (a command's own and its dependencies':
// about 1,200 files for `serve`) in a cache folder (NODE_COMPILE_CACHE, else under the OS temp dir), so that later
// starts skip compiling them. Node 20 has no such cache: there this does nothing.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// Each command's modules load only when it runs: `parse` never loads the GraphQL server, Sentry or BullMQ.
const commands: Record<string, (args: string[]) => Promise<number>> = {
  parse: async (args) => (await import('./parse.js')).parseCommand(args),
  eval: async (args) => (await import('./eval.js')).evalCommand(args),
  'check-bundle': async (args) => (await import('./check-bundle.js')).checkBundleCommand(args),
  serve: async (args) => (await import('./serve.js')).serveCommand(args),
};

/**
 * A command's help; its reading flags come from the reading options' table and its decoding flags from the
 * engine's registry (loaded only for the commands that take them).
 */
async function helpFor(name: string): Promise<string> {
  let help = HELP[name];
  if (help.includes('{reading}')) {
    const { readingHelp } = await import('./reading-flags.js');
    help = help.replace('{reading}', () => readingHelp());
  }
  const at = /\{decoding(?::(\w+))?\}/.exec(help);
  if (!at) return help;
  const { decodingHelp } = await import('./decoding-flags.js');
  return help.replace(at[0], () => decodingHelp(at[1] ? { verifier: at[1] } : {}));
}

/**
 * Whether this command will open an engine whose vision pass runs on a worker thread (CPU): then that thread is
 * started now, so that its start overlaps the command's own modules (engine/vision/thread.ts; README, "health and
 * metrics", for what it saved).
 */
function opensVisionThread(name: string, args: readonly string[]): boolean {
  const flag = (f: string): string | undefined => {
    const at = args.indexOf(f);
    return at >= 0 ? args[at + 1] : args.find((a) => a.startsWith(`${f}=`))?.slice(f.length + 1);
  };
  const onCpu = (device: string | undefined): boolean => (device ?? 'cpu') === 'cpu' || device === 'auto';
  if (name === 'serve')
    return (flag('--role') ?? process.env.SPECULA_ROLE ?? 'all') !== 'api' && onCpu(process.env.SPECULA_DEVICE);
  if (name === 'parse') return onCpu(flag('--device') ?? process.env.SPECULA_DEVICE);
  return false;
}

async function main(): Promise<void> {
  const { args, tooLong } = commandArgs();
  if (tooLong) {
    process.exitCode = await rerunWithArgsFile(args);
    return;
  }
  const [name, ...rest] = args;
  if (name === '--version' || name === '-v' || name === 'version') {
    console.log(softwareVersion());
    return;
  }
  if (!name) {
    // No command is a usage error, as an unknown one is: a script that forgot its command must not pass.
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    console.log(topic && HELP[topic] ? await helpFor(topic) : USAGE);
    return;
  }
  const cmd = commands[name];
  if (!cmd) {
    console.error(`specula: unknown command "${name}"\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(await helpFor(name));
    return;
  }
  const thread = opensVisionThread(name, rest) ? await import('../engine/vision/thread.js') : null;
  thread?.startSpareVisionThread();
  try {
    process.exitCode = await cmd(rest);
  } catch (e) {
    console.error(`specula ${name}: ${plainError(e as Error, name)}`);
    process.exitCode = (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1;
  } finally {
    await thread?.closeSpareVisionThread();
  }
}

await main();
