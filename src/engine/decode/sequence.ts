/** A line being read: what the request asked for it (LineTask) and where its decoding stands (Sequence). */
import type { Glyph } from '../ctc/align.js';
import type { EvidenceFit } from '../ctc/score.js';
import type { DraftingContext } from '../strategies/drafting-context.js';
import type { DraftLengthPolicy, DraftLengthSetting } from '../strategies/draft-length.js';
import type { Drafter, SequenceView } from '../strategies/drafters/drafter.js';
import type { SpecMetrics } from './metrics.js';
import type { GrayCrop } from '../vision/preprocess.js';
import type { ScriptGate } from '../ctc/script-gate.js';
import type { Verifier } from '../strategies/verifiers/verifier.js';
import type { VisualState } from '../vision/visual-state.js';

export interface LineTask {
  /** A line: its crop. A region (region bundles only): its lines' crops, top to bottom, read as one sequence. */
  crops: readonly GrayCrop[];
  drafter: Drafter;
  verifier: Verifier;
  draftLength: DraftLengthSetting;
  context: DraftingContext;
  metrics: SpecMetrics;
  /** Share of the line's visual tokens each step attends to (1 = all; less = focal pruning). */
  visualKeep?: number;
  /** Align the final text to the CTC frames (LineOutput.glyphs): where each character sits in the crop. */
  align?: boolean;
  /**
   * A line the CTC head reads more characters on than this is not decoded: it comes back at once, `tooLong`, for
   * the engine to read in pieces (engine/vision/wide-crops.ts).
   */
  maxChars?: number;
  /**
   * A line this gate scores above 0 (a script the model never learnt: engine/ctc/script-gate.ts) is not decoded: it
   * comes back at once with its CTC reading, `unread`.
   */
  unreadGate?: ScriptGate;
  /** Newly committed tokens of this line, and which of them came from an accepted draft. */
  onTokens?: (tokens: readonly number[], fromDraft: readonly boolean[], drafted: number) => void;
  signal?: AbortSignal;
  /** A text the line may hold (a PDF's text layer): how well it and the reading fit the CTC frames (LineOutput.fit). */
  evidence?: readonly number[];
}

export interface LineOutput {
  ids: number[];
  ctc: number[];
  /** Mean probability the model gave each committed token (a line's confidence). */
  confidence: number;
  /** Asked for (LineTask.align): each crop's characters, where the CTC frames place them, with their probabilities. */
  glyphs?: Glyph[][];
  /** Set when the CTC head read more than LineTask.maxChars characters: nothing was decoded (ids empty). */
  tooLong?: boolean;
  /** Set when LineTask.unreadGate judged the line to be in a script the model lacks: `ids` are the CTC reading's. */
  unread?: boolean;
  /** The vision pass this line was admitted with (several lines share one), and what it took. */
  visionGroup: number;
  visionMs: number;
  /** Where LineTask.evidence was given and the line read whole. */
  fit?: EvidenceFit;
}

/**
 * A sequence runs away when the decoder loses its place and repeats ("Con Con Con ...") until its cap. Over
 * the 1,742 lines of the evaluation line sets and 38 four-line docbank regions, no reading (of a region bundle's
 * regions either, runaways aside) was longer than its CTC reading's length x 0.97 + 16 characters; a runaway region
 * reached x 2.04. A sequence stops at x RUNAWAY_RATIO + RUNAWAY_SLACK: a page's run whose reading then has the
 * wrong number of lines is read again line by line (Engine.readBlocks), so a runaway costs less and never stands.
 */
const RUNAWAY_RATIO = 1.5;
const RUNAWAY_SLACK = 16;

/**
 * Most tokens a sequence may commit: the bundle's cap, `charsPerFrame` characters per visual token (one for text;
 * plus line breaks), and the runaway bound (for text only: a bundle that spells several characters a frame has a
 * CTC reading shorter than any reading, LaTeX's control words being longer than the frames they cover).
 */
export function tokenLimit(
  maxNew: number,
  visual: number,
  crops: number,
  ctcLength: number,
  charsPerFrame = 1,
): number {
  const runaway = charsPerFrame > 1 ? Infinity : RUNAWAY_SLACK + Math.ceil(RUNAWAY_RATIO * ctcLength);
  return Math.min(maxNew, Math.ceil(charsPerFrame * visual) + 4 * crops, runaway);
}

/** A read waiting for its line's result. */
export interface Pending {
  task: LineTask;
  resolve: (o: LineOutput) => void;
  reject: (e: unknown) => void;
}

export class Sequence implements SequenceView {
  tokens: number[] = [];
  /** Text position of `last` (BOS at 0; in a region bundle a line break opens the next line's positions). */
  pos = 0;
  probSum = 0;
  /** The probability the model gave each committed token, in order. */
  readonly probs: number[] = [];
  budget = 0;
  /**
   * The drafter's confidence in each token it may draft this step, when it gives one (the draft length learns from it).
   */
  draftConfidence: number[] | undefined = undefined;
  done = false;
  /** Focal pruning: the visual columns the next step attends to (null: all of them), and when it last saw all. */
  focal: number[] | null = null;
  /** Focal pruning: the column the decoder attended to most when it decided the last committed token. */
  fixation = 0;
  stepsSinceFull = 0;
  readonly policy: DraftLengthPolicy;

  constructor(
    readonly id: number,
    readonly p: Pending,
    readonly ctc: number[],
    /** The column each character of `ctc` was emitted at. */
    readonly ctcFrames: number[],
    /** The CTC head's probability for each character of `ctc`. */
    readonly ctcProbs: number[],
    public last: number,
    readonly limit: number,
    readonly visionGroup: number,
    readonly visionMs: number,
    readonly real: number,
    policy: DraftLengthPolicy,
  ) {
    this.policy = policy;
  }

  get context(): DraftingContext {
    return this.p.task.context;
  }

  get tree(): boolean {
    return this.p.task.verifier.trees;
  }

  /** Decoder state at the position that decided `last` (drafters that run a head start from it). */
  hidden: Float32Array | null = null;
  /** The focal layers' attention over every visual column at that position (routed drafters read it). */
  attention: Float32Array | null = null;
  /** Where `last` will be fed; set by the scheduler before drafting. */
  position = 0;
  /** The scheduler's row for this line and its current visual state, set before drafting. */
  row = 0;
  vis: { state: VisualState; layers: number; heads: number; headDim: number } | null = null;

  lastLayerVisual(): { k: Float32Array; v: Float32Array; mask: Float32Array; visual: number } {
    const v = this.vis;
    if (!v) throw new Error('no visual state for this line yet');
    const { state, layers, heads, headDim } = v;
    const per = heads * state.visual * headDim;
    // [L, B, H, V, dh]: one row of one layer is contiguous.
    const off = ((layers - 1) * state.batch + this.row) * per;
    return {
      k: state.k.subarray(off, off + per),
      v: state.v.subarray(off, off + per),
      mask: state.mask.subarray(this.row * state.visual, (this.row + 1) * state.visual),
      visual: state.visual,
    };
  }
}
