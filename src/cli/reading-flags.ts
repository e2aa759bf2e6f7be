/**
 * The CLI's reading flags and their help, derived from the reading options' table (options/reading-options.ts):
 * a switch that is off by default is `--flag`, one that is on is `--no-flag`; text options take a value.
 */
import { READING_OPTIONS, type ReadingOptionName, type ReadingOptionsInput } from '../options/reading-options.js';

type FlagOptions = Record<string, { type: 'string' | 'boolean' }>;

/** [option, flag as typed, what it takes (for the help), its help] for every option the CLI offers. */
function flags(): [ReadingOptionName, string, string, string][] {
  return Object.entries(READING_OPTIONS).flatMap(([key, spec]): [ReadingOptionName, string, string, string][] => {
    const name = key as ReadingOptionName;
    if (spec.kind === 'switch') return [[name, spec.default ? `no-${spec.flag}` : spec.flag, '', spec.help]];
    if (spec.kind === 'text') {
      const [flag, value] = spec.flag.split(' ');
      return [[name, flag, value, spec.help]];
    }
    return [];
  });
}

/** parseArgs options for every reading flag. */
export function readingFlags(): FlagOptions {
  return Object.fromEntries(
    flags().map(([name, flag]) => [flag, { type: READING_OPTIONS[name].kind === 'text' ? 'string' : 'boolean' }]),
  );
}

/** The flags given, as reading options (resolveReading checks them and fills the rest). */
export function readingFromFlags(values: Record<string, unknown>): ReadingOptionsInput {
  const input: Record<string, unknown> = {};
  for (const [name, flag] of flags()) {
    const v = values[flag];
    if (v === undefined) continue;
    const spec = READING_OPTIONS[name];
    input[name] = spec.kind === 'switch' && spec.default ? !v : v;
  }
  return input as ReadingOptionsInput;
}

/** Help lines for the reading flags, in the style of the rest of the command's help. */
export function readingHelp(): string {
  const wrap = (text: string): string =>
    text
      .replace(/(.{1,80})(?:\s+|$)/g, '$1\n')
      .trimEnd()
      .split('\n')
      .join(`\n${' '.repeat(32)}`);
  return flags()
    .map(([, flag, value, help]) => `  ${`--${flag}${value ? ` ${value}` : ''}`.padEnd(30)}${wrap(help)}`)
    .join('\n');
}
