/**
 * The contract between a decoder step's stages: plan (rows, draft budgets) → propose (drafts) → forward (row
 * layouts, visual selection, the decoder forward) → verify (verdicts, committed to the sequences and the KV
 * cache) → emit (tokens streamed, lines finished, metrics). Each stage reads the record and fills its own part,
 * as vLLM's spec-decode metadata passes between its proposers and its rejection sampler.
 */
import type { Bundle } from '../../bundle/bundle.js';
import type { StepOutput } from '../decoder-step.js';
import type { Draft } from '../../strategies/draft.js';
import type { CostTable } from '../../strategies/draft-length.js';
import type { FloatPool } from '../float-pool.js';
import type { KvCache } from '../kv-cache.js';
import type { PositionRule } from '../positions.js';
import type { RowLayout } from '../row-layout.js';
import type { Sequence } from '../sequence.js';
import type { VisualState } from '../../vision/visual-state.js';

/** What the stages read of the scheduler: the batch's caches and what it has measured so far. */
export interface StepContext {
  readonly bundle: Bundle;
  readonly positions: PositionRule;
  readonly pool: FloatPool;
  readonly cache: KvCache;
  readonly vis: VisualState;
  /** The measured cost of a forward (null until calibrated). */
  readonly costs: CostTable | null;
  /** What a step costs besides its forward and its drafting, per row (measured as steps run). */
  readonly overheadPerRow: number;
  /** Per drafter name: drafting time per drafted token per row, measured as steps run (propose updates it). */
  readonly draftMsPerTokenRow: Map<string, number>;
}

/** What one row committed this step. */
export interface RowCommit {
  /** The new tokens (an EOS and anything after it left out), and which of them came from an accepted draft. */
  readonly fresh: number[];
  readonly fromDraft: boolean[];
  /** How deep the draft offered at this step was (0: none). */
  readonly drafted: number;
  /** The line ends with this step (EOS, or its length cap). */
  readonly finished: boolean;
}

export interface StepRecord {
  /** The batch's rows in cache order (rows that finished earlier keep their place until compaction). */
  readonly seqs: readonly Sequence[];
  /** Rows still decoding: the batch size this step is priced at. */
  readonly live: number;
  readonly startedAt: number;
  /** propose: each row's draft (empty for rows that do not draft), and the time drafting took. */
  drafts: Draft[];
  draftMs: number;
  /** forward: each row's layout, the tokens fed per row, the columns each row attended to (null: all). */
  layout: RowLayout[];
  width: number;
  fullRows: boolean[];
  cols: number[][] | null;
  out: StepOutput | null;
  forwardMs: number;
  /** verify: what each row committed (null for rows that were already done), and the total. */
  commits: (RowCommit | null)[];
  committed: number;
}
