/**
 * V8's tier-up budget, raised for the whole process before Specula's own code runs (main.ts imports this module
 * first; the page bench's reader too). Node 20's V8 (11.x) optimises a function with TurboFan once it has run a
 * budget of bytecodes (67,584 by default), and again after every deoptimisation. Over docling's 34 pages that was 722
 * TurboFan compilations on V8's helper threads (4.6 s of CPU in a 19 s reading), two thirds of them the same functions
 * again; with four times the budget, 467 (2.5 s). Set at run time rather than on the command line: the flag is
 * V8 11's own (Node 22's V8 counts invocations instead, runs Maglev between the tiers, and refuses the flag), and a
 * flag set here reaches every launcher running on Node 20 (the CLI, the server, the CUDA image; the CPU image runs
 * Node 22) and every thread it starts.
 */
import v8 from 'node:v8';

export const TIERING_FLAG = '--interrupt-budget=270336';

/**
 * V8 11 (Node 20) only. Node 22's nearest knob, four times its TurboFan invocation count, also cut its compilations
 * (762 to 452) but read docling's pages in 0.93-1.11x the wall time over four pairs (median 0.97x): not set there.
 */
export function raiseTieringBudget(v8Version: string = process.versions.v8): boolean {
  if (Number(v8Version.split('.')[0]) !== 11) return false;
  v8.setFlagsFromString(TIERING_FLAG);
  return true;
}

raiseTieringBudget();
