import fs from 'node:fs';
import { estimateSkew as now } from '../dist/src/document/deskew.js';
import { estimateSkew as before } from '/tmp/wt/dist/src/document/deskew.js';
import { openSource } from '../dist/src/document/source.js';
import { flattenBackground } from '../dist/src/document/flatten.js';
const E = '/work/shared/eval/';
const files = [
  ...fs.readdirSync(E + 'docbank_samples/images').map(f => E + 'docbank_samples/images/' + f),
  ...fs.readdirSync(E + 'olmocr_bench_sample/pdfs').map(f => E + 'olmocr_bench_sample/pdfs/' + f),
  ...fs.readdirSync(E + 'docling_pdfs/pdfs').map(f => E + 'docling_pdfs/pdfs/' + f),
  ...fs.readdirSync(E + 'tesseract_test/images').filter(f => /\.(png|jpg|tif|tiff)$/i.test(f)).map(f => E + 'tesseract_test/images/' + f),
];
let pages = 0, diff = 0, ta = 0, tb = 0;
for (const f of files) {
  let src; try { src = await openSource(fs.readFileSync(f), f); } catch { continue; }
  for (const i of src.pages.slice(0, 3)) {
    const p = flattenBackground(await src.render(i));
    let t = performance.now(); const a = now(p); ta += performance.now() - t;
    t = performance.now(); const b = before(p); tb += performance.now() - t;
    pages++; if (a !== b) { diff++; console.log('differs', f, i, a, b); }
  }
  src.close();
}
console.log('pages', pages, 'different', diff, 'ms/page new', (ta / pages).toFixed(1), 'old', (tb / pages).toFixed(1));
