/** Drafts: each drafter is asked once per step, for all of its rows at once (a head runs one batched forward). */
import type { Drafter } from '../../strategies/drafters/drafter.js';
import { clip } from '../row-layout.js';
import type { StepContext, StepRecord } from './record.js';

export async function propose(ctx: StepContext, rec: StepRecord): Promise<void> {
  const { seqs } = rec;
  const byDrafter = new Map<Drafter, number[]>();
  seqs.forEach((s, r) => {
    if (s.done || s.budget <= 0) return;
    const rows = byDrafter.get(s.p.task.drafter) ?? [];
    rows.push(r);
    byDrafter.set(s.p.task.drafter, rows);
  });
  const { nLayers: layers, nHeads: heads, headDim } = ctx.bundle.config.dims;
  for (const [drafter, rows] of byDrafter) {
    for (const r of rows) {
      const s = seqs[r];
      s.row = r;
      s.position = s.pos;
      s.vis = { state: ctx.vis, layers, heads, headDim };
    }
    const t0 = performance.now();
    const proposed = await drafter.propose(rows.map((r) => seqs[r]));
    const ms = performance.now() - t0;
    rec.draftMs += ms;
    for (const m of new Set(rows.map((r) => seqs[r].p.task.metrics))) m.drafting(ms);
    rows.forEach((r, i) => (rec.drafts[r] = clip(proposed[i], seqs[r].budget, seqs[r].tree)));
    // A head that runs once per depth costs about ms / depth per drafted token, shared by the rows drafting.
    const depth = Math.max(...proposed.map((d) => d.tokens.length));
    if (depth > 0) {
      const perTokenRow = ms / depth / rows.length;
      const was = ctx.draftMsPerTokenRow.get(drafter.name);
      ctx.draftMsPerTokenRow.set(drafter.name, was === undefined ? perTokenRow : 0.9 * was + 0.1 * perTokenRow);
    }
  }
}
