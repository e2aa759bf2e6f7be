/**
 * The house rules of docs/contributing.md, held on the source itself: lines a screen wide, files and functions
 * short enough to read whole, comments that say why in a few lines (the reasons' numbers live in docs/benchmarks.md).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { ROOT } from './helpers/fixtures.js';

const MAX_LINE = 120;
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 100;
const MAX_COMMENT_LINES = 8;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const code = [...sources('src'), ...sources('schema')];
const everything = [...code, ...sources('bench'), ...sources('test')];

/** Functions (declarations, methods, arrows) longer than the rule, as "file:line name lines". */
function longFunctions(file: string): string[] {
  const sf = ts.createSourceFile(file, text(file), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const from = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const lines = sf.getLineAndCharacterOfPosition(n.end).line - from + 1;
      const name = 'name' in n && n.name ? n.name.getText(sf) : '(anonymous)';
      if (lines > MAX_FUNCTION_LINES) found.push(`${file}:${from + 1} ${name} ${lines}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/** Runs of comment lines longer than the rule, the file's opening header aside. */
function longComments(file: string): string[] {
  const lines = text(file).split('\n');
  const isComment = (l: string): boolean => /^\s*(\/\/|\/\*|\*)/.test(l);
  const found: string[] = [];
  for (let i = 0, header = true; i < lines.length;) {
    if (!isComment(lines[i])) {
      if (lines[i].trim()) header = false;
      i++;
      continue;
    }
    let j = i;
    while (j < lines.length && isComment(lines[j])) j++;
    if (j - i > MAX_COMMENT_LINES && !header) found.push(`${file}:${i + 1} ${j - i} lines`);
    header = false;
    i = j;
  }
  return found;
}

describe('the house rules', () => {
  it(`keeps every source line within ${MAX_LINE} characters`, () => {
    const long = everything.flatMap((f) =>
      text(f)
        .split('\n')
        .flatMap((l, i) => (l.length > MAX_LINE ? [`${relative(ROOT, join(ROOT, f))}:${i + 1}`] : [])),
    );
    assert.deepEqual(long, []);
  });

  it(`keeps every file under src/ and schema/ within ${MAX_FILE_LINES} lines`, () => {
    const big = code.filter((f) => text(f).split('\n').length > MAX_FILE_LINES);
    assert.deepEqual(big, []);
  });

  it(`keeps every function within ${MAX_FUNCTION_LINES} lines`, () => {
    assert.deepEqual(code.flatMap(longFunctions), []);
  });

  it(`keeps every comment within ${MAX_COMMENT_LINES} lines, file headers aside`, () => {
    assert.deepEqual(code.flatMap(longComments), []);
  });
});
