/**
 * A line task on its way into the batch: checked against the bundle when it is submitted, and made a sequence, with
 * its request's draft-length policy, when its vision pass joins.
 */
import type { Bundle } from '../bundle/bundle.js';
import { EngineError } from '../errors.js';
import { DraftLengthPolicy, type DraftLengthSetting } from '../strategies/draft-length.js';
import type { Drafter } from '../strategies/drafters/drafter.js';
import type { VisionPass } from '../vision/group-pass.js';
import { checkCrop } from '../vision/preprocess.js';
import { type LineTask, Sequence, tokenLimit } from './sequence.js';

/** Throws for a task the bundle cannot read: no crop, a region on a line bundle, too many lines, a crop misshapen. */
export function checkTask(bundle: Bundle, task: LineTask): void {
  const { height, widthMultiple, maxWidth } = bundle.config.image;
  const region = bundle.config.region;
  if (task.crops.length === 0) throw new EngineError('INVALID_CROP', 'a read needs at least one line crop');
  if (task.crops.length > 1 && !region) {
    throw new EngineError(
      'REGIONS_UNSUPPORTED',
      `bundle ${bundle.config.name} reads single lines; multi-line regions need a region bundle`,
    );
  }
  if (region && task.crops.length > region.maxLines) {
    throw new EngineError(
      'INVALID_CROP',
      `a region holds at most ${region.maxLines} lines in bundle ${bundle.config.name}, got ${task.crops.length}`,
    );
  }
  for (const crop of task.crops) checkCrop(crop, { height, widthMultiple, maxWidth });
}

/** One draft-length policy per request (its drafter instance), shared by its lines. */
export class DraftPolicies {
  private readonly policies = new WeakMap<Drafter, Map<DraftLengthSetting, DraftLengthPolicy>>();

  for(task: LineTask): DraftLengthPolicy {
    let bySetting = this.policies.get(task.drafter);
    if (!bySetting) {
      bySetting = new Map();
      this.policies.set(task.drafter, bySetting);
    }
    let p = bySetting.get(task.draftLength);
    if (!p) {
      p = new DraftLengthPolicy(task.draftLength);
      bySetting.set(task.draftLength, p);
    }
    return p;
  }
}

/** The sequences a pass's lines decode as, in its vision group `visionGroup`, numbered by `nextId`. */
export function sequencesFor(
  bundle: Bundle,
  pass: VisionPass,
  visionGroup: number,
  nextId: () => number,
  policies: DraftPolicies,
): Sequence[] {
  const { group, chunks, ms, ctc, ctcFrames, ctcProbs } = pass;
  const { bos } = bundle.config.specialIds;
  const real = chunks.flatMap((c) =>
    Array.from({ length: c.batch }, (_, r) => {
      let n = 0;
      for (let t = 0; t < c.visual; t++) n += c.mask[r * c.visual + t];
      return n;
    }),
  );
  const maxNew = bundle.config.decoding.maxNewTokens;
  // No line holds more characters than visual tokens, nor many more than the CTC head read (tokenLimit).
  return group.map(
    (p, r) =>
      new Sequence(
        nextId(),
        p,
        ctc[r],
        ctcFrames[r] ?? [],
        ctcProbs[r] ?? [],
        bos,
        tokenLimit(maxNew, real[r], p.task.crops.length, ctc[r].length, bundle.config.decoding.charsPerFrame),
        visionGroup,
        ms,
        real[r],
        policies.for(p.task),
      ),
  );
}
