/** Background flattening, deskew and layout analysis as a worker-thread task (see off-thread.ts): a page in, straightened and laid out. */
import type { GrayPage } from '../decode-image.js';
import { deskew } from '../deskew.js';
import { flattenBackground } from '../flatten.js';
import { analyzeLayout } from './analyze.js';
import type { PreparedPage } from './off-thread.js';

export default async function prepareTask(rendered: GrayPage): Promise<PreparedPage> {
  const t0 = performance.now();
  const flat = flattenBackground(rendered);
  const t1 = performance.now();
  const { page, degrees } = await deskew(flat);
  const t2 = performance.now();
  const layout = analyzeLayout(page);
  return { page, degrees, layout, ms: { flatten: t1 - t0, deskew: t2 - t1, layout: performance.now() - t2 } };
}
