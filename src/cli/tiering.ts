/**
 * V8's tier-up budget, raised for the whole process before Specula's own code runs (main.ts imports this module
 * first; the page bench's reader too). Node 20's V8 (11.x) optimises a function with TurboFan once it has run a
 * budget of bytecodes (67,584 by default), and again after every deoptimisation. Over docling's 34 pages that was 722
 * TurboFan compilations on V8's helper threads (4.6 s of CPU in a 19 s reading), two thirds of them the same functions
 * again; with four times the budget, 457 (2.6 s). Set at run time rather than on the command line: the flag is
 * V8 11's own (Node 22's V8 counts invocations instead, runs Maglev between the tiers, and refuses the flag), and a
 * flag set here reaches every launcher (the CLI, the server, the images) and every thread it starts.
 */
import v8 from 'node:v8';

export const TIERING_FLAG = '--interrupt-budget=270336';

/** V8 11 (Node 20) only: Node 22's equivalent (its invocation counts, four times) measured no faster there. */
export function raiseTieringBudget(v8Version: string = process.versions.v8): boolean {
  if (Number(v8Version.split('.')[0]) !== 11) return false;
  v8.setFlagsFromString(TIERING_FLAG);
  return true;
}

raiseTieringBudget();
