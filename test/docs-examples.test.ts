/**
 * Every GraphQL operation the README and docs show (in curl's JSON bodies and in graphql blocks) is valid against
 * the schema the server serves, so an example cannot drift from the API it documents.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, validate } from 'graphql';
import { schema } from '../schema/index.js';
import { ROOT } from './helpers/fixtures.js';

const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => join('docs', f))].filter((f) =>
  f.endsWith('.md'),
);

/** The operations on a page: `"query":"..."` in shell examples (JSON-unescaped) and ```graphql blocks. */
function operations(page: string): string[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const inJson = [...text.matchAll(/"query":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
  const blocks = [...text.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]);
  return [...inJson, ...blocks];
}

describe('the GraphQL examples in the README and docs', () => {
  it('are found on the pages that document the API', () => {
    for (const page of ['README.md', 'docs/api.md', 'docs/decoding.md']) assert.ok(operations(page).length, page);
  });

  for (const page of pages) {
    const ops = operations(page);
    if (!ops.length) continue;
    it(`${page}: each of its ${ops.length} operations is valid against the schema`, () => {
      for (const op of ops) {
        const errors = validate(schema, parse(op)).map((e) => e.message);
        assert.deepEqual(errors, [], op);
      }
    });
  }
});
