import { readFileSync } from 'node:fs';
import { openSource } from './dist/src/document/source.js';
import { deskew } from './dist/src/document/deskew.js';
import { analyzeLayout } from './dist/src/document/layout/analyze.js';
for (const f of process.argv.slice(2)) {
  const src = await openSource(readFileSync(f), f);
  const { page, degrees } = await deskew(await src.render(0));
  const L = analyzeLayout(page);
  const counts = {};
  for (const b of L.blocks) counts[b.type] = (counts[b.type] ?? 0) + 1;
  console.log(f.split('/').pop(), page.width + 'x' + page.height, 'skew', degrees, 'lh', L.lineHeight, JSON.stringify(counts), 'lines', L.blocks.reduce((n, b) => n + b.lines.length, 0));
}
