import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Tokenizer } from '../src/engine/bundle/tokenizer.js';
import { oneScriptPerWord, oneScriptReading, respeltIds } from '../src/engine/decode/mixed-scripts.js';

describe('one script per word', () => {
  it('writes Cyrillic look-alikes inside an English word in Latin', () => {
    assert.equal(oneScriptPerWord('to \u0435x\u0435\u0441u- the MEDPIX'), 'to execu- the MEDPIX');
    assert.equal(oneScriptPerWord('\u041c\u0415DPIX scans'), 'MEDPIX scans');
  });

  it('writes Latin look-alikes inside a Russian or Greek word in its own script', () => {
    assert.equal(oneScriptPerWord('\u043co\u043bo\u043ao'), '\u043c\u043e\u043b\u043e\u043a\u043e');
    assert.equal(oneScriptPerWord('\u03bb\u03cc\u03b3o\u03c2'), '\u03bb\u03cc\u03b3\u03bf\u03c2');
  });

  it('lets the line decide a word that cannot tell its own script', () => {
    const mixed = 'K\u041e\u041c';
    assert.equal(
      oneScriptPerWord(`\u041f\u0440\u0438\u0432\u0435\u0442 ${mixed}`),
      '\u041f\u0440\u0438\u0432\u0435\u0442 \u041a\u041e\u041c',
    );
    assert.equal(oneScriptPerWord(`Hello ${mixed}`), 'Hello KOM');
    // One Greek letter (a misread W) does not outvote the Latin line around it.
    assert.equal(oneScriptPerWord('RICE \u039bITH PEANUT'), 'RICE \u039bITH PEANUT');
  });

  it('judges each line of a region on its own', () => {
    assert.equal(oneScriptPerWord('Привет мир снова\nHello K\u041e\u041c'), 'Привет мир снова\nHello KOM');
  });

  it('respells a word only where each of its letters has a twin in the chosen script', () => {
    // In a Russian line: Δ and μ have no Cyrillic twin, so the symbols stay as written.
    assert.equal(oneScriptPerWord('Разность ΔT и ток μA'), 'Разность ΔT и ток μA');
    // In a Greek line a Latin capital beside a Greek letter is taken for Greek: the image cannot tell them apart.
    assert.equal(oneScriptPerWord('Η διαφορά ΔT'), 'Η διαφορά Δ\u03a4');
  });

  it('writes Roman numerals in Latin letters whatever the line is written in', () => {
    assert.equal(oneScriptPerWord('в \u0425I\u0425 веке'), 'в XIX веке');
  });

  it('swaps the ids of the letters it respelt and keeps every other id', () => {
    const vocab = ['<pad>', '<bos>', '<eos>', '<mask>', '<unk>', 'e', 'x', '\u0435', ' '];
    const tokenizer = new Tokenizer(vocab, { pad: 0, bos: 1, eos: 2, mask: 3, unk: 4, ctcBlank: 0 }, 1);
    assert.deepEqual(respeltIds([7, 6, 1, 7, 6, 2, 7], 'ex\nex', tokenizer), [5, 6, 1, 5, 6, 2, 7]);
  });

  it('leaves words in one script, and letters with no look-alike, as they are', () => {
    for (const text of [
      'Zażółć gęślą jaźń',
      'Все люди рождаются',
      '5 k\u03a9 and 3 \u03bcm',
      'EnerGel\u0442\u043c',
      'x = 2',
    ]) {
      assert.equal(oneScriptPerWord(text), text);
    }
  });

  it("keeps a reading's length and moves its glyphs' characters with its text", () => {
    const glyphs = Array.from('\u0435xit', (char, k) => ({ char, x0: k * 10, x1: k * 10 + 9, prob: 0.9 }));
    const reading = oneScriptReading({ text: '\u0435xit', glyphs });
    assert.equal(reading.text, 'exit');
    assert.deepEqual(
      reading.glyphs?.map((g) => g.char + g.x0),
      ['e0', 'x10', 'i20', 't30'],
    );
  });
});
