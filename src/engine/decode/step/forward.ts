/**
 * The step's one decoder forward: every row's [last token, ...draft, ...mask blocks], padded to the widest row,
 * positioned by depth, masked by who may see whom; rows with a focal selection attend to their columns only.
 */
import { decoderStep, takesPositionMask } from '../decoder-step.js';
import { depths } from '../../strategies/draft.js';
import { draftSelection, gatherVisual, MAX_PRUNED_ROWS, positionMask, positionWindows, unionOf } from '../focal.js';
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
  // A pruned row verifying a draft: each new token sees its own window, the reader's selection moved to where the
  // token it decides was read from (focal.ts); the forward gathers their union. A graph that takes one visual mask
  // per row gets the union for every token.
  const perToken = pruning && takesPositionMask(ctx.bundle.decoder);
  const windows = seqs.map((s, r) => {
    if (s.done || !pruning || s.focal === null) return null;
    const d = drafts[r];
    const perChar = s.real / Math.max(1, s.ctc.length);
    const dep = d.tokens.length ? depths(d) : [];
    if (!perToken) return [draftSelection(s.focal, s.fixation, dep, d.columns, s.real, perChar)];
    return positionWindows(s.focal, s.fixation, dep, d.columns, s.real, perChar);
  });
  const selections = seqs.map((s, r) => (s.done ? [0] : windows[r] ? unionOf(windows[r] as number[][]) : null));
  const gathered = pruning ? gatherVisual(ctx.vis, selections, nLayers, nHeads, headDim, ctx.pool) : null;
  const visMask = gathered && perToken ? positionMask(gathered.state, gathered.cols, windows, t) : undefined;
  // The optional outputs only where a row reads them (verify.ts): drafting heads read the hidden state, focal
  // pruning and routed drafting the visual attention.
  const live = seqs.filter((s) => !s.done);
  const fetch = {
    hidden: live.some((s) => s.p.task.drafter.usesHiddenState),
    visAttn: live.some((s) => s.p.task.drafter.usesAttention || (s.p.task.visualKeep ?? 1) < 1),
  };
  rec.out = await decoderStep(ctx.bundle, ctx.cache, gathered?.state ?? ctx.vis, {
    tokens,
    positions,
    attend,
    fetch,
    ...(visMask ? { visMask } : {}),
  });
  rec.forwardMs = performance.now() - t0;
  rec.layout = layout;
  rec.width = t;
  rec.cols = gathered?.cols ?? null;
}
