import fs from 'node:fs';
import { openSource } from '../dist/src/document/source.js';
import { flattenBackground } from '../dist/src/document/flatten.js';
import { linesRunDown, turnPage } from '../dist/src/document/orientation.js';
import { deskew, estimateSkew } from '../dist/src/document/deskew.js';
import { analyzeLayout } from '../dist/src/document/layout/analyze.js';
import { cropLines } from '../dist/src/document/crop-lines.js';
const dir = '/work/shared/eval/tesseract_test/images/';
const files = fs.readdirSync(dir).filter(f => /\.(png|jpg|tif)$/.test(f));
const T = {}; const add = (k, t) => T[k] = (T[k] ?? 0) + t;
let lines = 0;
for (let rep = 0; rep < 2; rep++) for (const f of files) {
  let t = performance.now();
  const src = await openSource(fs.readFileSync(dir + f), f);
  const page0 = await src.render(0); add('render', performance.now() - t); t = performance.now();
  const flat = flattenBackground(page0); add('flatten', performance.now() - t); t = performance.now();
  linesRunDown(flat); add('runDown', performance.now() - t); t = performance.now();
  estimateSkew(flat); add('skew', performance.now() - t); t = performance.now();
  const { page } = await deskew(flat); add('deskew(+skew)', performance.now() - t); t = performance.now();
  const layout = analyzeLayout(page); add('layout', performance.now() - t); t = performance.now();
  const boxes = layout.blocks.flatMap(b => b.lines.map(l => l.box));
  const crops = await cropLines(page, boxes, { height: 32, widthMultiple: 4, maxWidth: 2048 }); add('crop', performance.now() - t);
  if (rep) lines += crops.length;
  src.close();
  if (rep === 0 && f === files[files.length - 1]) for (const k in T) T[k] = 0;
}
console.log('pages', files.length, 'lines/page', lines / files.length, 'size', (await openSource(fs.readFileSync(dir+files[0]), files[0]).then(s=>s.render(0))).width);
for (const k in T) console.log(k, (T[k] / files.length).toFixed(1), 'ms/page');
