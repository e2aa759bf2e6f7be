/**
 * A line's result as the scheduler hands it back: a decoded line's, and those of lines that leave a landed vision
 * pass undecoded (too long for their task, or in a script the model lacks).
 */
import type { Bundle } from '../bundle/bundle.js';
import { lineGlyphs } from '../ctc/align.js';
import { evidenceFit } from '../ctc/score.js';
import { unreadScore } from '../ctc/script-gate.js';
import type { FloatPool } from './float-pool.js';
import type { LineOutput, Sequence } from './sequence.js';
import { partitionPass, type VisionPass } from '../vision/group-pass.js';
import type { VisualState } from '../vision/visual-state.js';

/** Each member's row of a pass: the chunk's visual state that holds it, and its row there. */
function passRows(pass: VisionPass): { state: VisualState; row: number }[] {
  return pass.chunks.flatMap((c) => Array.from({ length: c.batch }, (_, row) => ({ state: c, row })));
}

/**
 * Lines the CTC head read more characters on than their task allows go back undecoded (`tooLong`), their rows
 * taken out of the pass's visual states; the rest of the pass joins as it is. `space`: the space's token.
 */
export function withoutTooLong(pass: VisionPass, bundle: Bundle, space: number, pool: FloatPool): VisionPass {
  const long = pass.group.map((p, r) => p.task.maxChars !== undefined && pass.ctc[r].length > p.task.maxChars);
  if (!long.includes(true)) return pass;
  const rows = passRows(pass);
  pass.group.forEach((p, r) => {
    if (!long[r]) return;
    // Read in pieces, the line is never whole again: evidence offered for it is weighed here, against its CTC
    // reading.
    const fit =
      p.task.evidence && p.task.crops.length === 1
        ? evidenceFit(
            rows[r].state,
            rows[r].row,
            pass.ctc[r],
            p.task.evidence,
            bundle.config.specialIds.ctcBlank,
            space,
          )
        : undefined;
    p.resolve({
      ids: [],
      ctc: pass.ctc[r],
      confidence: 0,
      tooLong: true,
      ...(fit ? { fit } : {}),
      visionGroup: 0,
      visionMs: pass.ms,
    });
  });
  return partitionPass(pass, (m) => !long[m], bundle.config.dims, pool, false)[0];
}

/**
 * Lines their task's script gate flags (a script the model lacks) go back undecoded, `unread`, with their CTC
 * reading: the decoder would only write Latin garbage to its length cap. Their rows leave the pass as too-long
 * lines' do.
 */
export function withoutUnread(pass: VisionPass, visionGroup: number, bundle: Bundle, pool: FloatPool): VisionPass {
  if (!pass.group.some((p) => p.task.unreadGate)) return pass;
  const rows = passRows(pass);
  const unread = pass.group.map(
    (p, r) =>
      p.task.unreadGate !== undefined &&
      p.task.crops.length === 1 &&
      unreadScore(p.task.unreadGate, rows[r].state, rows[r].row) > 0,
  );
  if (!unread.includes(true)) return pass;
  pass.group.forEach((p, r) => {
    if (!unread[r]) return;
    const probs = pass.ctcProbs[r] ?? [];
    const { state, row } = rows[r];
    const glyphs = p.task.align
      ? lineGlyphs(
          state,
          row,
          p.task.crops.map((c) => c.width),
          pass.ctc[r],
          probs,
          bundle.tokenizer,
          bundle.config.image.visualStride,
        )
      : undefined;
    // Streamed as one batch of tokens, so a line's streamed tokens still spell its text.
    try {
      if (pass.ctc[r].length)
        p.task.onTokens?.(
          pass.ctc[r],
          pass.ctc[r].map(() => false),
          0,
        );
    } catch (e) {
      p.reject(e); // a caller's callback that throws ends its own line
      return;
    }
    p.resolve({
      ids: pass.ctc[r],
      ctc: pass.ctc[r],
      confidence: probs.length ? probs.reduce((a, b) => a + b, 0) / probs.length : 0,
      unread: true,
      ...(glyphs ? { glyphs } : {}),
      visionGroup,
      visionMs: pass.ms,
    });
  });
  return partitionPass(pass, (m) => !unread[m], bundle.config.dims, pool, false)[0];
}

/**
 * A finished sequence's result. `vis` is the batch's visual state, which still holds the sequence at `row` (finished
 * rows leave it only at the next compaction; -1: not there). `space`: the space's token.
 */
export function decodedOutput(
  s: Sequence,
  vis: VisualState | null,
  row: number,
  bundle: Bundle,
  space: number,
): LineOutput {
  const { task } = s.p;
  const glyphs =
    task.align && vis && row >= 0
      ? lineGlyphs(
          vis,
          row,
          task.crops.map((c) => c.width),
          s.tokens,
          s.probs,
          bundle.tokenizer,
          bundle.config.image.visualStride,
        )
      : undefined;
  const fit =
    task.evidence && vis && row >= 0 && task.crops.length === 1
      ? evidenceFit(vis, row, s.tokens, task.evidence, bundle.config.specialIds.ctcBlank, space)
      : undefined;
  return {
    ids: s.tokens,
    ctc: s.ctc,
    confidence: s.tokens.length ? s.probSum / s.tokens.length : 0,
    ...(glyphs ? { glyphs } : {}),
    ...(fit ? { fit } : {}),
    visionGroup: s.visionGroup,
    visionMs: s.visionMs,
  };
}
