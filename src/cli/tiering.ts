/**
 * V8's tier-up budget, raised for the whole process before any command's modules load (main.ts imports this module
 * first; the page bench's reader too). Node 20's V8 (11.x) checks whether to optimise a function every 67,584 bytes of
 * its bytecode run (a tick; TurboFan after a few ticks, more for a large function), and starts again after every
 * deoptimisation. Over docling's 34 pages that was 722 TurboFan compilations, 4.6 s of compile time by --trace-opt,
 * two thirds of it functions compiled before; with four times the budget, 467 (2.5 s). Set at run time rather than on
 * the command line: the flag is V8 11's own (Node 22's V8 counts invocations instead, runs Maglev between the tiers,
 * and a command line carrying the flag fails there with "bad option"; NODE_OPTIONS takes no such flag on any
 * version), and a flag set here reaches every launcher running on Node 20 (the CLI, the server, the CUDA image; the
 * CPU image runs Node 22) and every thread it starts.
 *
 * Node's documentation warns that a flag changed after V8 has started may do nothing or worse. This one is read
 * each time V8 resets a function's budget (it took effect: the counts above are with it set here), and a changed
 * flag set only makes V8 reject code cached under the old one, which Node's start-up did not show (the server
 * ready in 877 ms against 893, five starts each).
 */
import v8 from 'node:v8';

export const TIERING_FLAG = '--interrupt-budget=270336';

/**
 * The flag for this V8 (null: none). V8 11 (Node 20) only. Node 22's nearest knob, four times its TurboFan invocation
 * count, also cut its compilations (762 to 452) but read docling's pages in 0.93-1.11x the wall time over four pairs
 * (median 0.97x): not set there.
 */
export function tieringFlagFor(v8Version: string): string | null {
  return Number(v8Version.split('.')[0]) === 11 ? TIERING_FLAG : null;
}

const flag = tieringFlagFor(process.versions.v8);
if (flag) v8.setFlagsFromString(flag);
