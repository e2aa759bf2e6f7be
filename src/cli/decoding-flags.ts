/**
 * The CLI's decoding flags and their help, derived from the engine's registry: a strategy's parameter is a flag
 * (`--top-k`), its range and default in the help, with no list kept here.
 */
import { readFile } from 'node:fs/promises';
import {
  DEFAULT_DRAFTER,
  DEFAULT_VERIFIER,
  type DecodingOptionsInput,
  DRAFT_LENGTH,
  knobRange,
  VISUAL_KEEP,
} from '../engine/strategies/options.js';
import { drafterSpecs, type Knob, parameterGroups, verifierSpecs } from '../engine/strategies/registry.js';

type FlagOptions = Record<string, { type: 'string' }>;

/** Every strategy parameter as [flag, strategy, parameter, knob]. */
const parameterFlags = (): [string, string, string, Knob][] =>
  parameterGroups().flatMap((g) =>
    Object.entries(g.params).map(([name, k]): [string, string, string, Knob] => [k.flag, g.name, name, k]),
  );

/** parseArgs options for every decoding flag. */
export function decodingFlags(): FlagOptions {
  const flags: FlagOptions = {
    drafter: { type: 'string' },
    verifier: { type: 'string' },
    [DRAFT_LENGTH.flag]: { type: 'string' },
    [VISUAL_KEEP.flag]: { type: 'string' },
    reference: { type: 'string' },
  };
  for (const [flag] of parameterFlags()) flags[flag] = { type: 'string' };
  return flags;
}

/** The flags given, as decoding options (the engine checks them, ranges and all). */
export async function decodingFromFlags(
  values: Record<string, string | boolean | undefined>,
): Promise<DecodingOptionsInput> {
  const str = (flag: string): string | undefined =>
    typeof values[flag] === 'string' ? (values[flag] as string) : undefined;
  const num = (flag: string): number | undefined => (str(flag) === undefined ? undefined : Number(str(flag)));
  const params: Record<string, Record<string, number>> = {};
  for (const [flag, group, name] of parameterFlags()) {
    const v = num(flag);
    if (v !== undefined) (params[group] ??= {})[name] = v;
  }
  const length = str(DRAFT_LENGTH.flag);
  const reference = str('reference');
  return {
    ...(str('drafter') !== undefined ? { drafter: str('drafter') } : {}),
    ...(str('verifier') !== undefined ? { verifier: str('verifier') } : {}),
    ...(length !== undefined ? { draftLength: length === 'auto' ? 'auto' : Number(length) } : {}),
    ...(num(VISUAL_KEEP.flag) !== undefined ? { visualTokens: { keep: num(VISUAL_KEEP.flag) } } : {}),
    ...(reference !== undefined ? { reference: await readFile(reference, 'utf8') } : {}),
    ...params,
  };
}

/** Help lines for the decoding flags, in the style of the rest of the command's help. */
export function decodingHelp(defaults: { verifier?: string } = {}): string {
  const row = (flag: string, text: string): string => `  ${flag.padEnd(30)}${text}`;
  const names = (specs: readonly { name: string }[], dflt: string): string =>
    specs.map((s) => (s.name === dflt ? `${s.name} (default)` : s.name)).join(', ');
  return [
    row('--drafter D', names(drafterSpecs(), DEFAULT_DRAFTER)),
    row('--verifier V', names(verifierSpecs(), defaults.verifier ?? DEFAULT_VERIFIER)),
    row(`--${DRAFT_LENGTH.flag} N|auto`, `tokens drafted per step, ${knobRange(DRAFT_LENGTH)} (default auto)`),
    row(
      `--${VISUAL_KEEP.flag} R`,
      `focal pruning: the share of visual tokens each step attends to (${knobRange(VISUAL_KEEP)})`,
    ),
    row('--reference TEXTFILE', "the reference drafter's text"),
    ...parameterFlags().map(([flag, group, , k]) =>
      row(
        `--${flag} ${k.type === 'int' ? 'N' : 'X'}`,
        `${group}: ` +
          `${k.description[0].toLowerCase()}${k.description.slice(1).replace(/\.$/, '')}` +
          ` (${knobRange(k)}, default ${k.default})`,
      ),
    ),
  ].join('\n');
}
