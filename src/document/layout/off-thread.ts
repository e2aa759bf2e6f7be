/**
 * A page's deskew and layout analysis off the main thread. onnxruntime-node runs the decoder on the main thread,
 * so the skew search and the layout (a few hundred milliseconds of JavaScript a page) there would stall
 * decoding, and the server's answers, for that long. In a worker thread they overlap the decoding of lines
 * already submitted: the next page of a document, or another job's page. One thread on a small machine.
 */
import { availableParallelism } from 'node:os';
import type { Piscina } from 'piscina';
import type { GrayPage } from '../decode-image.js';
import type { Turn } from '../orientation.js';
import type { PageFrame } from '../page-geometry.js';
import type { PageLayout } from './analyze.js';

export interface PrepareRequest {
  page: GrayPage;
  /** The page's turn when the caller knows it (a second try, half round from the first); else it is found. */
  turn?: Turn;
  /** The page may be an image of one line of text (an image file's only page, not a PDF's). */
  lineImage?: boolean;
  /** The page may be a photograph of a sheet (an image, not a rendered PDF page): found, straightened, relit. */
  capture?: boolean;
}

/** The page turned upright and straight (when it was turned or skewed) and its layout. */
export interface PreparedPage {
  page: GrayPage;
  /** Small skew undone, in degrees. */
  degrees: number;
  /** Quarter turns applied before that, clockwise. */
  turn: Turn;
  /** A photographed sheet, straightened before that (capture.ts): where it lay, and the rectangle it became. */
  sheet?: PageFrame['sheet'];
  /** The image is one line of text: `page` is the image as it came, its layout that one line. */
  oneLine: boolean;
  layout: PageLayout;
  /** Milliseconds each step took in the worker thread. */
  ms: { flatten: number; deskew: number; layout: number };
}

/**
 * How long a layout thread waits idle before it goes: long, because behind a busy decoder a document's next page
 * often waits seconds for its turn and a restarted thread compiles the layout code again. An idle thread does not
 * keep the process alive (piscina unrefs it).
 */
export const LAYOUT_IDLE_MS = 30_000;

let pool: Promise<Piscina<PrepareRequest, PreparedPage>> | null = null;

export async function preparePageOffThread(request: PrepareRequest): Promise<PreparedPage> {
  // piscina loads with the first page rather than with the server, to keep it off the server's start.
  pool ??= import('piscina').then(
    ({ Piscina }) =>
      new Piscina<PrepareRequest, PreparedPage>({
        filename: new URL('./layout-worker.js', import.meta.url).href,
        minThreads: 0,
        maxThreads: Math.max(1, Math.min(4, availableParallelism() - 1)),
        idleTimeout: LAYOUT_IDLE_MS,
      }),
  );
  return (await pool).run(request);
}
