import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ScriptGateSchema, scriptVerdict, UNNAMED } from '../src/engine/ctc/script-gate.js';
import type { VisualState } from '../src/engine/vision/visual-state.js';
import { unreadScriptOf } from '../src/worker/page-script.js';

/** A state of one row whose mean CTC distribution is `mean`, with `frames` real frames. */
function stateOf(mean: number[], frames = 60): VisualState {
  return {
    visual: frames,
    mask: new Float32Array(frames).fill(1),
    reads: [{ mean: Float32Array.from(mean) }],
  } as unknown as VisualState;
}

describe('the script gate', () => {
  const gate = ScriptGateSchema.parse({
    classes: ['read', 'hangul', 'arabic'],
    // On log(mean + floor): entry 1 speaks for Hangul, entry 2 for Arabic.
    weights: [
      [0, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ],
    bias: [0, 0, 0],
    floor: 1e-4,
    minFrames: 40,
  });

  it('names the script a flagged line is in, and passes a line in a script the model reads', () => {
    const hangul = scriptVerdict(gate, stateOf([0.001, 8, 0.001]), 0);
    const arabic = scriptVerdict(gate, stateOf([0.001, 0.001, 8]), 0);
    const read = scriptVerdict(gate, stateOf([0.9, 0.05, 0.05]), 0);
    assert.ok(hangul.unread > 0 && arabic.unread > 0, 'both flagged');
    assert.deepEqual([hangul.script, arabic.script], ['hangul', 'arabic']);
    assert.ok(read.unread < 0, `a read line is passed (${read.unread})`);
  });

  it('does not judge a line too short to tell', () => {
    assert.deepEqual(scriptVerdict(gate, stateOf([0.001, 8, 0.001], 20), 0), { unread: -Infinity, script: null });
  });

  it("reads a bundle's gate from before the classes as one unnamed class, its scores unchanged", () => {
    const old = ScriptGateSchema.parse({ weights: [0, 2, -1], bias: 0.5, floor: 1e-4, minFrames: 40 });
    const mean = [0.2, 0.3, 0.5]; // stored as float32, as the vision pass keeps it
    const v = scriptVerdict(old, stateOf(mean), 0);
    const logit = 0.5 + 2 * Math.log(0.3 + 1e-4) - Math.log(0.5 + 1e-4);
    assert.ok(Math.abs(v.unread - logit) < 1e-5, `${v.unread} against ${logit}`);
    assert.equal(v.script, UNNAMED);
  });

  it('judges a page by most of its lines, and names the script most of them were given', () => {
    const f = (script: string) => ({ unread: 2, script });
    const passed = { unread: -3, script: 'han' };
    assert.equal(unreadScriptOf([f('hangul'), f('hangul'), f('han'), passed]), 'hangul');
    assert.equal(unreadScriptOf([f('hangul'), passed, passed]), null, 'a third flagged is not the page');
    assert.equal(unreadScriptOf([f('hangul'), f('hangul')]), null, 'two lines are too few to judge');
  });
});
