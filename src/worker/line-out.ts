/** One line as its page gives it: a formula's LaTeX, the PDF's text layer, or the reading, marked where untrusted. */
import type { LineOut } from '../document/assemble.js';
import type { LineCrop } from '../document/crop-lines.js';
import { FALLBACK_CONFIDENCE } from '../document/formula.js';
import { type InlineFormula, withInlineFormulas } from '../document/inline-formulas.js';
import type { LayoutLine } from '../document/layout/analyze.js';
import type { Box } from '../document/layout/ink.js';
import { isMonospace, pitchOf } from '../document/monospace.js';
import type { LayerChar } from '../document/source.js';
import { lineWords } from '../document/word-boxes.js';
import type { Glyph } from '../engine/ctc/align.js';
import type { LineReading } from '../engine/engine.js';
import type { ReadingOptions } from '../options/reading-options.js';
import type { FormulaRead } from './page-formulas.js';
import { distrust } from './reading-trust.js';
import { layerWins, layerWords } from './text-layer.js';

/** A monospace line's pitch in page pixels (monospace.ts), from where its glyphs lie in its crop. */
function monospace(glyphs: readonly Glyph[] | undefined, crop: LineCrop, box: Box): { pitch?: number } {
  return glyphs && isMonospace(glyphs) ? { pitch: (pitchOf(glyphs) * (crop.place ?? box).width) / crop.width } : {};
}

/**
 * One line as the page gives it: a formula's LaTeX; the PDF's text layer where it is offered and stands for the
 * reading (text-layer.ts); else the reading, marked where it is not to be trusted (reading-trust.ts).
 */
export function lineOut(
  l: LayoutLine,
  line: LineReading,
  crop: LineCrop,
  formula: FormulaRead | undefined,
  inline: InlineFormula[] | undefined,
  layer: { chars: LayerChar[]; text: string | undefined } | null,
  opts: Pick<ReadingOptions, 'words' | 'chars'>,
): LineOut {
  const wantWords = opts.words;
  if (formula?.verdict === 'latex') {
    // Word boxes of a formula: the formula is one "word" over its ink (hOCR, ALTO and a searchable PDF hold it
    // whole; its characters have no columns of their own in LaTeX).
    const f = formula.reading;
    const whole = { text: f.text, box: l.band, confidence: f.confidence };
    const words = wantWords ? { words: [opts.chars ? { ...whole, chars: [] } : whole] } : {};
    const number = formula.number ? { number: formula.number } : {};
    return { box: l.box, text: f.text, confidence: f.confidence, formula: 'latex', ...number, ...words };
  }
  const verdict = formula?.verdict ?? 'text';
  if (layer && !inline && verdict === 'text' && !line.unread && layerWins(line.text, layer.text, line.fit)) {
    const words = wantWords ? { words: layerWords(layer.chars, l.band, line.confidence, opts.chars) } : {};
    return {
      box: l.box,
      text: layer.text,
      confidence: line.confidence,
      textLayer: true,
      ...words,
      ...monospace(line.glyphs, crop, l.box),
    };
  }
  // (Glyphs are aligned for every line; words only where asked for.)
  const words =
    line.glyphs && wantWords ? { words: lineWords(crop, crop.place ?? l.box, line.glyphs, { chars: opts.chars }) } : {};
  const fallback = verdict === 'fallback' ? { formula: 'fallback' as const } : {};
  const confidence = verdict === 'fallback' ? Math.min(line.confidence, FALLBACK_CONFIDENCE) : line.confidence;
  const why = line.unread ? null : distrust(line);
  const untrusted = why ? { unreadable: true, distrust: why } : {};
  const out: LineOut = {
    box: l.box,
    text: line.text,
    confidence,
    ...(line.unread ? { unread: true } : {}),
    ...untrusted,
    ...words,
    ...fallback,
    ...monospace(line.glyphs, crop, l.box),
  };
  return inline ? withInlineFormulas(out, inline) : out;
}
