/**
 * Each row's verifier decides what its draft earns; the accepted tokens and the bonus token are committed to the
 * row's sequence (and its drafter told), and the kept positions to the KV cache. Nothing is streamed here: emit
 * does that once every row is committed.
 */
import {
  depths,
  type Draft,
  type ForwardView,
  parentsOf,
  probability,
  type RowLogits,
  type Verdict,
} from '../../strategies/draft.js';
import { nextSelection, REFRESH_BELOW, REFRESH_EVERY } from '../focal.js';
import { withForbidden } from '../positions.js';
import type { Sequence } from '../sequence.js';
import type { VerifiedLine } from '../../strategies/verifiers/verifier.js';
import type { VisualState } from '../../vision/visual-state.js';
import type { StepContext, StepRecord } from './record.js';

export function verify(ctx: StepContext, rec: StepRecord): void {
  const out = rec.out;
  if (!out) throw new Error('verify runs after the forward');
  const { seqs, drafts, layout, width: t, cols } = rec;
  const { eos } = ctx.bundle.config.specialIds;
  const picks: number[][] = seqs.map(() => []);
  seqs.forEach((s, r) => {
    if (s.done) return;
    const draft = drafts[r];
    const lines = s.p.task.crops.length;
    // One array per position, however often it is asked for: the verifier and the token probabilities below
    // read the same positions (a forbidden token is masked in a copy).
    const seen: Float32Array[] = [];
    const view: RowLogits = {
      at: (i) =>
        (seen[i] ??= withForbidden(
          out.logits.subarray((r * t + i) * out.vocab, (r * t + i + 1) * out.vocab),
          ctx.positions.forbidden(layout[r].positions[i], lines),
        )),
    };
    const judged = s.p.task.verifier.verify(draft, view, verifiedLine(s, ctx.vis, r));
    const drafted = draft.tokens.length ? Math.max(...depths(draft)) : 0;
    // Focal pruning under a lossless verifier: the decoder alone decides the text, and a pruned decoder that refuses
    // a drafted token may refuse it for want of a column it did not see. Its own token there is not committed: the
    // next step attends to everything and decides that position (the joint verifier's CTC term already corrects
    // such refusals, measured in bench:focal).
    const deferred = !rec.fullRows[r] && s.p.task.verifier.lossless && refused(draft, judged);
    if (deferred && !judged.accepted.length) {
      // Nothing to keep: the fed token is fed again, unpruned; its cache position is not kept either.
      picks[r] = [];
      refocus(s, r, seqs.length, out.visAttn, t, cols ? cols[r] : null, false, 0, 1);
      s.focal = null;
      s.p.task.metrics.row(drafted, draft.tokens.length, 0, 0);
      s.policy.observe(drafted, 0, s.draftConfidence);
      rec.commits[r] = { fresh: [], fromDraft: [], drafted, finished: false };
      return;
    }
    // Deferred after accepted tokens: the last of them becomes the token fed next (as if it were the bonus), so
    // drafters and the cache see an ordinary verdict one token shorter.
    const verdict = deferred
      ? { accepted: judged.accepted.slice(0, -1), bonus: draft.tokens[judged.accepted[judged.accepted.length - 1]] }
      : judged;
    const fromDraftCount = judged.accepted.length;
    const forwardView: ForwardView = {
      after: (node) => view.at(node + 1),
      lookahead: (node) => layout[r].blockOf(node).map((i) => view.at(i)),
    };
    picks[r] = [0, ...verdict.accepted.map((i) => i + 1)];
    const committed = [...verdict.accepted.map((i) => draft.tokens[i]), verdict.bonus];
    const fresh: number[] = [];
    const fromDraft: boolean[] = [];
    let finished = false;
    let minProb = 1;
    for (let i = 0; i < committed.length; i++) {
      if (committed[i] === eos) {
        finished = true;
        break;
      }
      // Token i was decided at the fed token (i = 0) or right after accepted draft token i - 1.
      const prob = probability(view.at(i === 0 ? 0 : verdict.accepted[i - 1] + 1), committed[i]);
      s.probSum += prob;
      s.probs.push(prob);
      minProb = Math.min(minProb, prob);
      fresh.push(committed[i]);
      fromDraft.push(i < fromDraftCount);
      if (s.tokens.length + fresh.length >= s.limit) {
        finished = true;
        break;
      }
    }
    s.tokens.push(...fresh);
    for (const tok of committed) s.pos = ctx.positions.next(s.pos, tok);
    rec.committed += committed.length;
    // The position that decided the bonus token: where a drafting head starts next step.
    const at = verdict.accepted.length ? verdict.accepted[verdict.accepted.length - 1] + 1 : 0;
    if (s.p.task.drafter.usesHiddenState) {
      const d = out.hidden.length / (seqs.length * t);
      s.hidden = out.hidden.slice((r * t + at) * d, (r * t + at + 1) * d);
    }
    if (s.p.task.drafter.usesAttention) {
      const width = out.visAttn.length / (seqs.length * t);
      const mine = cols ? cols[r] : null;
      const full = new Float32Array(ctx.vis.visual);
      for (let j = 0; j < width && j < (mine?.length ?? ctx.vis.visual); j++)
        full[mine ? mine[j] : j] = out.visAttn[(r * t + at) * width + j];
      s.attention = full;
    }
    refocus(s, r, seqs.length, out.visAttn, t, cols ? cols[r] : null, rec.fullRows[r], at, minProb);
    if (deferred) s.focal = null;
    s.last = verdict.bonus;
    s.p.task.metrics.row(drafted, draft.tokens.length, judged.accepted.length, committed.length);
    s.policy.observe(drafted, judged.accepted.length, s.draftConfidence);
    s.p.task.drafter.observe?.(s, draft, verdict, committed, forwardView);
    rec.commits[r] = { fresh, fromDraft, drafted, finished };
  });
  ctx.cache.commit(out.newK, out.newV, t, picks);
}

/**
 * Row r of the batch as a verifier sees it: its id, and its CTC log-probabilities read from the visual state when
 * asked.
 */
function verifiedLine(s: Sequence, vis: VisualState, r: number): VerifiedLine {
  return {
    id: s.id,
    ctc: () => {
      const vocab = vis.ctcLogProbs.length / (vis.batch * vis.visual);
      return {
        logProbs: vis.ctcLogProbs.subarray(r * vis.visual * vocab, (r * vis.visual + s.real) * vocab),
        frames: s.real,
        vocab,
      };
    },
  };
}

/**
 * Choose the visual columns row r attends to next, from the focal layers' attention over what it saw this
 * step at the position that decided the last committed token. A full step follows an uncertain token, and comes
 * every REFRESH_EVERY steps, so the selection re-anchors.
 */
function refocus(
  s: Sequence,
  r: number,
  rows: number,
  visAttn: Float32Array,
  t: number,
  cols: number[] | null,
  full: boolean,
  at: number,
  minProb: number,
): void {
  const keep = s.p.task.visualKeep ?? 1;
  if (keep >= 1) return;
  const seen = cols ?? Array.from({ length: s.real }, (_, i) => i);
  const width = visAttn.length / (rows * t);
  s.p.task.metrics.visual(seen.length / Math.max(1, s.real));
  // Where the decoder is reading now: position `at` decided the last committed token (AR: the only position). A long
  // accepted draft's earlier positions looked further left; their attention would hold the eye back.
  const mass = seen.map((_, j) => visAttn[(r * t + at) * width + j]);
  let best = 0;
  for (let j = 1; j < mass.length; j++) if (mass[j] > mass[best]) best = j;
  s.fixation = seen[best] ?? 0;
  s.stepsSinceFull = full ? 0 : s.stepsSinceFull + 1;
  if (minProb < REFRESH_BELOW || s.stepsSinceFull >= REFRESH_EVERY) {
    s.focal = null;
    return;
  }
  s.focal = nextSelection(seen, mass, s.real, keep);
}

/**
 * Did the verifier refuse a drafted token, rather than run out of draft? (The draft offered a token after the last one
 * kept.)
 */
function refused(draft: Draft, verdict: Verdict): boolean {
  const last = verdict.accepted.length ? verdict.accepted[verdict.accepted.length - 1] : -1;
  return parentsOf(draft).includes(last);
}
