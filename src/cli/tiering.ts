/**
 * V8's tier-up budget, raised for the whole process before any command's modules load (main.ts imports this module
 * first; the page bench's reader too), because Node 20's V8 re-optimises the same functions many times over a
 * document (CHANGELOG 0.5.8 has the counts). Set at run time, not on the command line: the flag is V8 11's own and a
 * command line carrying it fails on Node 22; set here it reaches every launcher on Node 20 and every thread.
 *
 * Node warns that a flag changed after V8 has started may do nothing or worse; this one is read each time V8 resets
 * a function's budget, so it takes effect.
 */
import v8 from 'node:v8';

export const TIERING_FLAG = '--interrupt-budget=270336';

/**
 * The flag for this V8 (null: none). V8 11 (Node 20) only: Node 22's nearest knob cut compilations without making
 * pages faster.
 */
export function tieringFlagFor(v8Version: string): string | null {
  return Number(v8Version.split('.')[0]) === 11 ? TIERING_FLAG : null;
}

const flag = tieringFlagFor(process.versions.v8);
if (flag) v8.setFlagsFromString(flag);
