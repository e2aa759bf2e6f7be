/**
 * A page's deskew and layout analysis off the main thread. onnxruntime-node runs the decoder on the main thread,
 * so the skew search and the layout (a few hundred milliseconds of JavaScript a page) there would stall
 * decoding, and the server's answers, for that long. In a worker thread they overlap the decoding of lines
 * already submitted: the next page of a document, or another job's page. One thread on a small machine.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { GrayPage } from '../decode-image.js';
import type { PageLayout } from './analyze.js';

/** The page turned straight (when it was skewed) and its layout. */
export interface PreparedPage {
  page: GrayPage;
  degrees: number;
  layout: PageLayout;
  /** Milliseconds each step took in the worker thread. */
  ms: { flatten: number; deskew: number; layout: number };
}

let pool: Piscina<GrayPage, PreparedPage> | null = null;

export function preparePageOffThread(page: GrayPage): Promise<PreparedPage> {
  pool ??= new Piscina<GrayPage, PreparedPage>({
    filename: new URL('./layout-worker.js', import.meta.url).href,
    minThreads: 0,
    maxThreads: Math.max(1, Math.min(4, availableParallelism() - 1)),
    // Idle threads go, so a CLI run ends when its work does.
    idleTimeout: 2000,
  });
  return pool.run(page);
}
