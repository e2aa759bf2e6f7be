/** Background flattening, deskew and layout analysis as a worker-thread task (see off-thread.ts): a page in, straightened and laid out. */
import type { GrayPage } from '../decode-image.js';
import { deskew } from '../deskew.js';
import { flattenBackground } from '../flatten.js';
import { analyzeLayout } from './analyze.js';
import type { PreparedPage } from './off-thread.js';

export default async function prepareTask(rendered: GrayPage): Promise<PreparedPage> {
  const { page, degrees } = await deskew(flattenBackground(rendered));
  return { page, degrees, layout: analyzeLayout(page) };
}
