/**
 * The reading options are declared once (src/options/reading-options.ts): resolved by one function, and the
 * GraphQL input, the CLI's flags and its help all hold exactly the table's options.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isInputObjectType } from 'graphql';
import { schema } from '../schema/index.js';
import { readingFlags, readingFromFlags, readingHelp } from '../src/cli/reading-flags.js';
import { READING_OPTIONS, ReadingOptionsError, resolveReading } from '../src/options/reading-options.js';

describe('reading options, declared once', () => {
  it('fills every default, and reads null as absent', () => {
    assert.deepEqual(resolveReading({ pages: null, words: null }), {
      words: false,
      chars: false,
      dropHeadersFooters: false,
      scriptGate: true,
      textLayer: true,
      formulas: true,
    });
  });

  it('turns words on for character boxes and for a word-level rendering', () => {
    assert.equal(resolveReading({ chars: true }).words, true);
    assert.equal(resolveReading({ formats: ['markdown', 'alto'] }).words, true);
    assert.equal(resolveReading({ formats: ['markdown', 'text'] }).words, false);
  });

  it('reads a blank page range as every page and keeps each format once', () => {
    const o = resolveReading({ pages: '  ', formats: ['text', 'text', 'json'] });
    assert.equal(o.pages, undefined);
    assert.deepEqual(o.formats, ['text', 'json']);
  });

  it('refuses a value of the wrong kind with an error naming the option', () => {
    assert.throws(
      () => resolveReading({ pages: 'x'.repeat(1001) }),
      (e: unknown) => e instanceof ReadingOptionsError && e.option === 'pages',
    );
    const wrong = { textLayer: 'no' } as unknown as Parameters<typeof resolveReading>[0];
    assert.throws(
      () => resolveReading(wrong),
      (e: unknown) => e instanceof ReadingOptionsError && e.option === 'textLayer',
    );
  });

  it('gives the API an input field for every option, under its API name', () => {
    const input = schema.getType('CreateParseJobInput');
    assert.ok(input && isInputObjectType(input));
    const fields = Object.keys(input.getFields());
    for (const [key, spec] of Object.entries(READING_OPTIONS)) {
      const name = 'api' in spec ? spec.api : key;
      assert.ok(fields.includes(name), `CreateParseJobInput.${name}`);
      assert.equal(input.getFields()[name].description, spec.description);
    }
  });

  it('gives the CLI a flag for every option but the job-only formats, --no-x for those on by default', () => {
    const flags = Object.keys(readingFlags()).sort();
    assert.deepEqual(flags, [
      'chars',
      'drop-headers',
      'no-formulas',
      'no-script-gate',
      'no-text-layer',
      'pages',
      'words',
    ]);
    for (const flag of flags) assert.match(readingHelp(), new RegExp(`--${flag}\\b`));
    assert.deepEqual(readingFromFlags({ 'no-text-layer': true, chars: true, pages: '0-2' }), {
      textLayer: false,
      chars: true,
      pages: '0-2',
    });
  });
});
