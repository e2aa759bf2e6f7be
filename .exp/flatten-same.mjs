import fs from 'node:fs';
import { flattenBackground as now } from '../dist/src/document/flatten.js';
import { flattenBackground as before } from '/tmp/wt/dist/src/document/flatten.js';
import { openSource } from '../dist/src/document/source.js';
import { readdirSync } from 'node:fs';
const E = '/work/shared/eval/';
const files = [
  ...fs.readdirSync(E + 'docbank_samples/images').map(f => E + 'docbank_samples/images/' + f),
  ...fs.readdirSync(E + 'olmocr_bench_sample/pdfs').map(f => E + 'olmocr_bench_sample/pdfs/' + f),
  ...fs.readdirSync(E + 'docling_pdfs/pdfs').map(f => E + 'docling_pdfs/pdfs/' + f),
  ...fs.readdirSync(E + 'tesseract_test/images').filter(f => /\.(png|jpg|tif|tiff)$/i.test(f)).map(f => E + 'tesseract_test/images/' + f),
  ...fs.readdirSync('/work/main/test/fixtures').filter(f => /\.(png|jpg)$/i.test(f)).map(f => '/work/main/test/fixtures/' + f),
];
let pages = 0, diff = 0, ta = 0, tb = 0, changed = 0;
for (const f of files) {
  let src; try { src = await openSource(fs.readFileSync(f), f); } catch { continue; }
  for (const i of src.pages.slice(0, 3)) {
    const p = await src.render(i);
    let t = performance.now(); const a = now(p); ta += performance.now() - t;
    t = performance.now(); const b = before(p); tb += performance.now() - t;
    pages++; if (a !== p) changed++;
    if (Buffer.compare(Buffer.from(a.data), Buffer.from(b.data)) !== 0) { diff++; console.log('differs', f, i); }
  }
  src.close();
}
console.log('pages', pages, 'flattened', changed, 'different', diff, 'ms/page new', (ta / pages).toFixed(1), 'old', (tb / pages).toFixed(1));
