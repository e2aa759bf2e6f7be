import fs from 'node:fs';
import { openSource } from '../dist/src/document/source.js';
import { flattenBackground } from '../dist/src/document/flatten.js';
import { deskew } from '../dist/src/document/deskew.js';
import { analyzeLayout } from '../dist/src/document/layout/analyze.js';
import { cropLines } from '../dist/src/document/crop-lines.js';
import sharp from 'sharp';
if (process.env.CONC) sharp.concurrency(Number(process.env.CONC));
if (process.env.NOCACHE) sharp.cache(false);
const dir = '../../shared/eval/docbank_samples/images/';
const files = fs.readdirSync(dir).filter(f => f.endsWith('.jpg'));
const pages = [];
let renderCpu = 0;
for (const f of files) {
  const c0 = process.cpuUsage();
  const src = await openSource(fs.readFileSync(dir + f), f);
  const p = await src.render(0);
  const c = process.cpuUsage(c0); renderCpu += (c.user + c.system) / 1000;
  const { page } = await deskew(flattenBackground(p));
  pages.push({ page, boxes: analyzeLayout(page).blocks.flatMap(b => b.lines.map(l => l.box)) });
}
for (let rep = 0; rep < 2; rep++) {
  const c0 = process.cpuUsage(); const t0 = performance.now(); let n = 0;
  for (const { page, boxes } of pages) { const crops = await cropLines(page, boxes, { height: 32, maxWidth: 1600 }); n += crops.length; }
  const c = process.cpuUsage(c0);
  console.log('crop: cpu ms/page', ((c.user + c.system) / 1000 / pages.length).toFixed(1), 'wall ms/page', ((performance.now() - t0) / pages.length).toFixed(1), 'lines', n);
}
console.log('render cpu ms/page', (renderCpu / files.length).toFixed(1));
