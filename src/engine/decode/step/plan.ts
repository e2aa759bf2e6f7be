/** A step's plan: which rows decode, and how many tokens each row's drafter may propose (its budget). */
import { MAX_DRAFT_LENGTH, planDepths } from '../../strategies/draft-length.js';
import type { Sequence } from '../sequence.js';
import type { StepContext, StepRecord } from './record.js';

export function plan(ctx: StepContext, seqs: readonly Sequence[]): StepRecord {
  let live = 0;
  for (const s of seqs) if (!s.done) live++;
  const startedAt = performance.now();
  // Rows under `auto` share one forward width (planDepths); fixed lengths and gated drafters set their own.
  const auto: Sequence[] = [];
  let floor = 1;
  for (const s of seqs) {
    const drafter = s.p.task.drafter;
    s.draftConfidence = undefined;
    const room = s.limit - s.tokens.length;
    if (s.done || drafter.name === 'none') s.budget = 0;
    else if (s.policy.setting !== 'auto') {
      s.budget = Math.min(s.policy.setting, room);
      floor = Math.max(floor, 1 + (drafter.forwardWidth?.(s.budget) ?? s.budget));
    } else if (drafter.gatedDepth)
      s.budget = Math.min(drafter.gatedDepth, room); // its gate, not the policy, ends each draft
    else auto.push(s);
  }
  if (auto.length) {
    const rooms = auto.map((s) => s.limit - s.tokens.length);
    const outlooks = auto.map((s, i) => {
      const drafter = s.p.task.drafter;
      s.draftConfidence = drafter.confidence?.(s, Math.min(rooms[i], MAX_DRAFT_LENGTH));
      return s.policy.outlook(
        rooms[i],
        s.draftConfidence,
        (k) => drafter.forwardWidth?.(k) ?? k,
        ctx.draftMsPerTokenRow.get(drafter.name) ?? 0,
      );
    });
    const depths = ctx.costs
      ? planDepths(outlooks, live, ctx.costs, ctx.overheadPerRow * live, floor)
      : auto.map(() => 4);
    auto.forEach((s, i) => (s.budget = Math.min(depths[i] || s.policy.probe(), rooms[i])));
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
