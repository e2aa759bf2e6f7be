/**
 * What a line's frames and glyphs say beyond its text: how well a text fits them, and whether its type is monospace.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMonospace } from '../src/document/monospace.js';
import type { LayerChar } from '../src/document/source.js';
import { ctcLogLikelihood } from '../src/engine/ctc/score.js';
import { layerAgrees, layerText, layerWins } from '../src/worker/text-layer.js';

/**
 * Every labelling of `frames` frames over `vocab` labels that collapses (repeats merged, blanks dropped) to `targets`.
 */
function bruteForce(scores: Float32Array, frames: number, vocab: number, targets: number[], blank: number): number {
  let total = 0;
  const path = new Array<number>(frames).fill(0);
  const walk = (t: number, logp: number): void => {
    if (t === frames) {
      const out: number[] = [];
      path.forEach((l, i) => {
        if (l !== blank && (i === 0 || path[i - 1] !== l)) out.push(l);
      });
      if (out.length === targets.length && out.every((l, i) => l === targets[i])) total += Math.exp(logp);
      return;
    }
    for (let l = 0; l < vocab; l++) {
      path[t] = l;
      walk(t + 1, logp + scores[t * vocab + l]);
    }
  };
  walk(0, 0);
  return Math.log(total);
}

describe("a text weighed against a line's CTC frames", () => {
  it('gets the log-probability of every path that spells it, repeats and blanks included', () => {
    const frames = 5;
    const vocab = 3;
    const scores = new Float32Array(frames * vocab);
    for (let t = 0; t < frames; t++) {
      const raw = [0.2 + 0.1 * t, 1 - 0.15 * t, 0.5];
      const z = raw.reduce((s, x) => s + Math.exp(x), 0);
      raw.forEach((x, l) => (scores[t * vocab + l] = x - Math.log(z)));
    }
    for (const targets of [[1], [1, 2], [1, 1], [2, 1, 2], []]) {
      assert.ok(
        Math.abs(
          ctcLogLikelihood(scores, 0, frames, vocab, targets, 0) - bruteForce(scores, frames, vocab, targets, 0),
        ) < 1e-5,
        String(targets),
      );
    }
    assert.equal(
      ctcLogLikelihood(scores, 0, 2, vocab, [1, 1], 0),
      -Infinity,
      'a repeat needs a blank between: three frames',
    );
  });
});

describe("a line's type", () => {
  const glyphs = (text: string, at: (i: number) => number) =>
    [...text].map((char, i) => ({ char, x0: at(i) - 2, x1: at(i) + 2, prob: 1 }));
  it('is monospace where its characters, spaces counted, stand a pitch apart', () => {
    assert.equal(isMonospace(glyphs('APT::Periodic::Unattended-Upgrade "1";', (i) => 12 * i + (i % 3) - 1)), true);
  });
  it("is not where their widths vary as a proportional font's do", () => {
    const text = 'The illustrious minimum was well within';
    let x = 0;
    const at = [...text].map((c) => (x += /[il.,' ]/.test(c) ? 5 : /[mwMW]/.test(c) ? 16 : 10));
    assert.equal(isMonospace(glyphs(text, (i) => at[i])), false);
  });
});

describe("a PDF's text layer on a line", () => {
  const band = { x: 100, y: 50, width: 300, height: 20 };
  const char = (c: string, x: number, y = 52): LayerChar => ({ c, x, y, width: 8, height: 16 });
  it(
    'is the characters drawn on its band, left to right, one of a pair ' +
      'drawn twice, words parted by spaces or gaps',
    () => {
      const chars = [
        char('b', 118),
        char('a', 108),
        char('a', 108.5),
        char(' ', 126),
        char('c', 134),
        char('d', 170),
        char('z', 150, 90),
      ];
      assert.equal(layerText(chars, band), 'ab c d');
      assert.equal(layerText([char('q', 500)], band), undefined);
    },
  );
  it(
    'stands for the reading only where it differs and fits the frames ' + 'about as well, on a page whose layer agrees',
    () => {
      assert.equal(layerWins('/etc/apt . c a n . d', '/etc/apt/apt.conf.d', { reading: -125, evidence: -12 }), true);
      assert.equal(layerWins('the fox', 'the cat', { reading: -20, evidence: -90 }), false);
      assert.equal(layerWins('same', 'same', { reading: -1, evidence: -1 }), false);
      assert.equal(layerWins('a', 'b', undefined), false);
      assert.equal(
        layerAgrees([
          { reading: 'one line', layer: 'one line' },
          { reading: 'two lines', layer: 'two lines.' },
          { reading: 'x', layer: 'wholly other' },
        ]),
        true,
      );
      assert.equal(
        layerAgrees([
          { reading: 'one line', layer: 'zzz' },
          { reading: 'two lines', layer: 'qqq qqq' },
        ]),
        false,
      );
    },
  );
});
