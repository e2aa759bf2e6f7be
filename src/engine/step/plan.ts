/** A step's plan: which rows decode, and how many tokens each row's drafter may propose (its budget). */
import type { Sequence } from '../sequence.js';
import type { StepContext, StepRecord } from './record.js';

export function plan(ctx: StepContext, seqs: readonly Sequence[]): StepRecord {
  let live = 0;
  for (const s of seqs) if (!s.done) live++;
  const startedAt = performance.now();
  for (const s of seqs) {
    const drafter = s.p.task.drafter;
    const draftCost = (ctx.draftMsPerTokenRow.get(drafter.name) ?? 0) * live;
    // A gated drafter under `auto` gets its whole depth: its gate, not the policy, ends each draft.
    const length = drafter.gatedDepth && s.policy.setting === 'auto'
      ? drafter.gatedDepth
      : s.policy.next(live, ctx.costs, (k) => drafter.forwardWidth?.(k) ?? k, ctx.overheadPerRow * live, draftCost);
    s.budget = s.done || drafter.name === 'none' ? 0 : Math.min(length, s.limit - s.tokens.length);
  }
  return {
    seqs,
    live,
    startedAt,
    drafts: seqs.map(() => ({ tokens: [] })),
    draftMs: 0,
    layout: [],
    width: 0,
    fullRows: [],
    cols: null,
    out: null,
    forwardMs: 0,
    commits: seqs.map(() => null),
    committed: 0,
  };
}
