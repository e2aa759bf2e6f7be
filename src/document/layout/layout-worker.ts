/** The layout analysis as a worker-thread task (see off-thread.ts): a page in, its layout out. */
import type { GrayPage } from '../decode-image.js';
import { analyzeLayout, type PageLayout } from './analyze.js';

export default function layoutTask(page: GrayPage): PageLayout {
  return analyzeLayout(page);
}
