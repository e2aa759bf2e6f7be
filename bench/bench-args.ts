/**
 * A bench script's command line: `--help` prints the usage its opening comment gives, and an unknown or malformed
 * option is named beside that usage instead of ending the script with a stack trace.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The opening block comment of the script at `scriptUrl` (its import.meta.url), without its comment marks. */
export function usageOf(scriptUrl: string): string {
  const source = readFileSync(fileURLToPath(scriptUrl), 'utf8');
  const block = /^\s*\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  return block
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

/** parseArgs over the process's arguments, with `--help` and clear errors (exit code 2) for the script. */
export function benchOptions<T extends ParseArgsConfig>(scriptUrl: string, config: T): ReturnType<typeof parseArgs<T>> {
  const argv = config.args ?? process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usageOf(scriptUrl));
    process.exit(0);
  }
  try {
    return parseArgs({ ...config, args: argv }) as ReturnType<typeof parseArgs<T>>;
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (!code.startsWith('ERR_PARSE_ARGS_')) throw err;
    console.error(`${(err as Error).message}\n\n${usageOf(scriptUrl)}`);
    process.exit(2);
  }
}
