/**
 * The step's one decoder forward: every row's [last token, ...draft, ...mask blocks], padded to the widest row,
 * positioned by depth, masked by who may see whom; rows with a focal selection attend to their columns only.
 */
import { decoderStep } from '../decoder-step.js';
import { depths } from '../draft.js';
import { draftSelection, gatherVisual, MAX_PRUNED_ROWS } from '../focal.js';
import { layoutRow } from '../row-layout.js';
import type { StepContext, StepRecord } from './record.js';

export async function forward(ctx: StepContext, rec: StepRecord): Promise<void> {
  const { seqs, drafts } = rec;
  const { pad, mask } = ctx.bundle.config.specialIds;
  const layout = drafts.map((d, r) => layoutRow(d, seqs[r].pos, ctx.positions));
  const t = Math.max(...layout.map((l) => l.width));
  const tokens = seqs.map((s, r) => {
    const row = [s.last, ...drafts[r].tokens, ...Array<number>(layout[r].masks).fill(mask)];
    return [...row, ...Array<number>(t - row.length).fill(pad)];
  });
  const positions = layout.map((l) => [...l.positions, ...Array<number>(t - l.positions.length).fill(l.positions[0])]);
  const attend = (r: number, i: number, j: number): boolean => layout[r].attend(i, j);
  const { nLayers, nHeads, headDim } = ctx.bundle.config.dims;
  // Pruning pays only in a narrow forward: gathering each row's columns costs more than the attention it saves
  // once the batch is wide (bench:focal, README). A wider forward attends to everything, and its rows keep
  // choosing their columns for when the batch narrows.
  const narrow = rec.live <= MAX_PRUNED_ROWS;
  const pruning = narrow && seqs.some((s) => !s.done && s.focal !== null);
  rec.fullRows = seqs.map((s) => !pruning || s.focal === null);
  // A pruned forward's cost includes gathering its columns.
  const t0 = performance.now();
  // A pruned row verifying a draft also attends where each drafted token was read from (focal.ts).
  const selections = seqs.map((s, r) => {
    if (s.done) return [0];
    if (!pruning || s.focal === null) return null;
    const d = drafts[r];
    return draftSelection(s.focal, s.fixation, d.tokens.length ? depths(d) : [], d.columns, s.real, s.real / Math.max(1, s.ctc.length));
  });
  const gathered = pruning ? gatherVisual(ctx.vis, selections, nLayers, nHeads, headDim, ctx.pool) : null;
  // The optional outputs only where a row reads them (verify.ts): drafting heads read the hidden state, focal
  // pruning and routed drafting the visual attention.
  const live = seqs.filter((s) => !s.done);
  const fetch = {
    hidden: live.some((s) => s.p.task.drafter.usesHiddenState),
    visAttn: live.some((s) => s.p.task.drafter.usesAttention || (s.p.task.visualKeep ?? 1) < 1),
  };
  rec.out = await decoderStep(ctx.bundle, ctx.cache, gathered?.state ?? ctx.vis, { tokens, positions, attend, fetch });
  rec.forwardMs = performance.now() - t0;
  rec.layout = layout;
  rec.width = t;
  rec.cols = gathered?.cols ?? null;
}
