/** `specula <command>`: parse documents, serve the API, check a bundle, evaluate. */

const USAGE = `usage:
  specula parse FILE... [--format markdown|json|text] [--json] [--pages 0,2-4] [--drop-headers]
                [--model DIR] [--device cpu|cuda] [--precision int8 (CPU default)|fp32] [--threads N]
                [--drafter ctc (default)|none|ngram|reference|mtp|pmtp|routed|diffusion|dual-diffusion] [--verifier greedy|tree|relaxed|joint] [--draft-length N|auto]
                [--top-k K --min-ratio R (relaxed)] [--ctc-weight W (joint)] [--reference TEXTFILE] [--visual-keep R (focal pruning, 0.02..1)]
  specula eval [--eval-dir DIR] [--suite lines|pages|all] [--sets a,b] [--limit N] [--out FILE] [--no-tesseract] [--write-config] [--precision int8|fp32]
               [--drafter D --verifier V --draft-length N|auto --visual-keep R (our decoding; default ctc + greedy, lossless)]
  specula check-bundle [DIR]
  specula serve [--role all|api|worker]   (the GraphQL API on PORT, default 4000; settings from the environment)`;

// Each command's modules load only when it runs: `parse` never loads the GraphQL server, Sentry or BullMQ.
const commands: Record<string, (args: string[]) => Promise<number>> = {
  parse: async (args) => (await import('./parse.js')).parseCommand(args),
  eval: async (args) => (await import('./eval.js')).evalCommand(args),
  'check-bundle': async (args) => (await import('./check-bundle.js')).checkBundleCommand(args),
  serve: async (args) => (await import('./serve.js')).serveCommand(args),
};

async function main(): Promise<void> {
  const [name, ...rest] = process.argv.slice(2);
  const cmd = name ? commands[name] : undefined;
  if (!cmd) {
    console.error(name && name !== '--help' ? `specula: unknown command "${name}"\n${USAGE}` : USAGE);
    process.exit(name === '--help' ? 0 : 2);
  }
  try {
    process.exitCode = await cmd(rest);
  } catch (e) {
    const err = e as Error & { code?: string };
    console.error(`specula ${name}: ${err.code ? `[${err.code}] ` : ''}${err.message}`);
    process.exitCode = 1;
  }
}

await main();
