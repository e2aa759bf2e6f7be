/**
 * The vision pass for a group of lines joining the batch: run in the vision worker while the batch goes on
 * decoding. The group is read narrowest first in chunks of similar widths, each padded only to its own widest
 * line (a page's headings and short last lines no longer cost a full-width pass); lines whose visual states are
 * known already (an orientation check read them) come first, as a chunk of their own.
 */
import type { Bundle } from '../bundle/bundle.js';
import type { FloatPool } from '../decode/float-pool.js';
import type { GrayCrop } from './preprocess.js';
import { ctcGreedyFrames } from '../ctc/head.js';
import type { Pending } from '../decode/sequence.js';
import { framesOf } from '../ctc/align.js';
import { chunkByColumns } from './chunks.js';
import {
  concatVisual,
  gatherRegions,
  keepVisualRows,
  releaseVisual,
  runVision,
  type VisualState,
} from './visual-state.js';

/** A vision pass in flight: its lines (narrowest first) and, once settled, their visual states or its error. */
export interface VisionPass {
  group: Pending[];
  /** One row per member of the group, in its order (a region's lines gathered into its row). */
  chunks: VisualState[];
  /** Each member's greedy CTC reading (a region's lines joined by line breaks). */
  ctc: number[][];
  /** The column (frame) of the member's row each character of `ctc` was emitted at (a line break: its line's first). */
  ctcFrames: number[][];
  /** The CTC head's probability for each character of `ctc` at its frame (a line break: 1). */
  ctcProbs: number[][];
  error: unknown;
  settled: boolean;
  ms: number;
  result: Promise<void>;
}

/** Start the pass for `taken` (lines or regions); `seen` gives up the visual states already computed for a crop. */
export function startVisionPass(
  bundle: Bundle,
  taken: Pending[],
  seen: WeakMap<GrayCrop, VisualState>,
  pool: FloatPool,
): VisionPass {
  const { nLayers, nHeads, headDim } = bundle.config.dims;
  const { bos, ctcBlank } = bundle.config.specialIds;
  const widest = (p: Pending): number => Math.max(...p.task.crops.map((c) => c.width));
  let group = taken.sort((a, b) => widest(a) - widest(b));
  const regions = group.some((p) => p.task.crops.length > 1);
  const known = regions ? [] : group.filter((p) => seen.has(p.task.crops[0]));
  const passes: Promise<VisualState>[] = [];
  if (known.length) {
    const states = known.map((p) => seen.get(p.task.crops[0]) as VisualState);
    for (const p of known) seen.delete(p.task.crops[0]);
    passes.push(
      Promise.resolve(states.length === 1 ? states[0] : concatVisual(states, nLayers, nHeads, headDim, pool)),
    );
    group = [...known, ...group.filter((p) => !known.includes(p))];
  }
  // Every other crop of the group, narrowest first; a region's lines go through the pass with their line index.
  const entries = group
    .slice(known.length)
    .flatMap((p, member) => p.task.crops.map((crop, line) => ({ member, line, crop })));
  if (regions) entries.sort((a, b) => a.crop.width - b.crop.width);
  // Each entry's place: which chunk's state, which row of it.
  const place: { state: number; row: number }[] = [];
  for (const indices of chunkByColumns(entries.map((e) => e.crop.width))) {
    const chunk = indices.map((i) => entries[i]);
    indices.forEach((i, row) => (place[i] = { state: passes.length, row }));
    passes.push(
      runVision(bundle, { crops: chunk.map((e) => e.crop), ...(regions ? { lines: chunk.map((e) => e.line) } : {}) }),
    );
  }
  const t0 = performance.now();
  const pass: VisionPass = {
    group,
    chunks: [],
    ctc: [],
    ctcFrames: [],
    ctcProbs: [],
    error: null,
    settled: false,
    ms: 0,
    result: Promise.resolve(),
  };
  pass.result = Promise.all(passes)
    .then(
      (chunks) => {
        // The readings came with the states (the vision worker made them; kept and joined rows carry theirs).
        const read = chunks.map((c) => c.reads ?? ctcGreedyFrames(c.ctcLogProbs, c.mask, c.batch, c.visual, ctcBlank));
        if (!regions) {
          pass.chunks = chunks;
          pass.ctc = read.flat().map((r) => r.ids);
          pass.ctcFrames = read.flat().map((r) => r.frames);
          pass.ctcProbs = read.flat().map((r) => r.probs);
          return;
        }
        // Each member's lines, in line order, as (pass, row) pairs.
        const members = group.map(() => [] as { state: number; row: number; line: number }[]);
        // The chunk states count from the known lines' one, which a region group never has.
        entries.forEach((e, i) => members[e.member].push({ ...place[i], line: e.line }));
        for (const m of members) m.sort((a, b) => a.line - b.line);
        pass.chunks = [gatherRegions(chunks, members, nLayers, nHeads, headDim, pool)];
        for (const c of chunks) releaseVisual(c, pool);
        pass.ctc = members.map((m) =>
          m.flatMap((x, j) => (j ? [bos, ...read[x.state][x.row].ids] : read[x.state][x.row].ids)),
        );
        pass.ctcProbs = members.map((m) =>
          m.flatMap((x, j) => (j ? [1, ...read[x.state][x.row].probs] : read[x.state][x.row].probs)),
        );
        // A region's row holds its lines' real columns one after another: each line's frames shift by those before it.
        const stride = bundle.config.image.visualStride;
        pass.ctcFrames = members.map((m, k) => {
          const widths = group[k].task.crops.map((c) => framesOf(c.width, stride));
          let at = 0;
          return m.flatMap((x, j) => {
            const base = at;
            at += widths[x.line] ?? 0;
            const frames = read[x.state][x.row].frames.map((f) => f + base);
            return j ? [base, ...frames] : frames;
          });
        });
      },
      (e: unknown) => {
        pass.error = e;
      },
    )
    .finally(() => {
      pass.ms = performance.now() - t0;
      pass.settled = true;
    });
  return pass;
}

/**
 * A settled pass's members in two parts, by `first` (a member's index in the group): each part holds its members,
 * their readings and their rows of the visual states, in order. A chunk whose rows all go one way moves whole; one
 * the parts share is copied into both (a few lines' visual states: a fraction of a batch rebuild) and handed back
 * to the pool, or, with `keepSecond` false, only the first part's rows are copied (the second part is dropped).
 */
export function partitionPass(
  pass: VisionPass,
  first: (member: number) => boolean,
  dims: { nLayers: number; nHeads: number; headDim: number },
  pool: FloatPool,
  keepSecond = true,
): [VisionPass, VisionPass] {
  const { nLayers, nHeads, headDim } = dims;
  const sides: [VisualState[], VisualState[]] = [[], []];
  let at = 0;
  for (const c of pass.chunks) {
    const rows = Array.from({ length: c.batch }, (_, r) => r);
    const mine = rows.filter((r) => first(at + r));
    at += c.batch;
    if (mine.length === c.batch) sides[0].push(c);
    else if (!mine.length && keepSecond) sides[1].push(c);
    else {
      if (mine.length) sides[0].push(keepVisualRows(c, mine, nLayers, nHeads, headDim, pool));
      if (keepSecond)
        sides[1].push(
          keepVisualRows(
            c,
            rows.filter((r) => !mine.includes(r)),
            nLayers,
            nHeads,
            headDim,
            pool,
          ),
        );
      releaseVisual(c, pool);
    }
  }
  const part = (chunks: VisualState[], side: boolean): VisionPass => {
    const of = <T>(xs: readonly T[]): T[] => xs.filter((_, m) => first(m) === side);
    return {
      ...pass,
      group: of(pass.group),
      chunks,
      ctc: of(pass.ctc),
      ctcFrames: of(pass.ctcFrames),
      ctcProbs: of(pass.ctcProbs),
    };
  };
  return [part(sides[0], true), part(sides[1], false)];
}

/** A landed pass split after its first `n` members: the head joins the batch now, the rest waits for room. */
export function splitPass(
  pass: VisionPass,
  n: number,
  dims: { nLayers: number; nHeads: number; headDim: number },
  pool: FloatPool,
): [VisionPass, VisionPass] {
  return partitionPass(pass, (m) => m < n, dims, pool);
}
