/**
 * A page made ready to read, as a worker-thread task (see off-thread.ts): an image that is one line of text is
 * read as that line (turned across when it runs down the image); a photograph has its sheet found, straightened
 * and evenly lit (capture.ts); anything else is flattened, turned upright when
 * it lies on its side (or by the turn the caller already knows), deskewed and laid out (on an enlarged copy where
 * its print is small: small-print.ts).
 */
import { fromCapture } from '../capture.js';
import { deskew } from '../deskew.js';
import { flattenBackground } from '../flatten.js';
import { isOneLine, lineImageTurn } from '../line-image.js';
import { linesRunDown, turnPage } from '../orientation.js';
import { oneLineLayout } from './analyze.js';
import { smallPrintLayout } from './small-print.js';
import type { PrepareRequest, PreparedPage } from './off-thread.js';

export default async function prepareTask({
  page: rendered,
  turn: known,
  lineImage,
  capture,
}: PrepareRequest): Promise<PreparedPage> {
  const t0 = performance.now();
  if (lineImage) {
    // A line image turned on its side is read turned a quarter round; the caller asks the model whether the other
    // quarter (known: 270) reads better, as for pages.
    const lineTurn = known ?? lineImageTurn(rendered);
    if (lineTurn !== null) {
      const line = await turnPage(rendered, lineTurn);
      // A turn found here is a line's already; one the caller knows is checked.
      if (known === undefined || isOneLine(line)) {
        return {
          page: line,
          degrees: 0,
          turn: lineTurn,
          oneLine: true,
          layout: oneLineLayout(line),
          ms: { flatten: 0, deskew: 0, layout: performance.now() - t0 },
        };
      }
    }
  }
  const captured = capture ? fromCapture(rendered) : null;
  const sheet = captured?.sheet
    ? { sheet: { corners: captured.sheet, width: captured.page.width, height: captured.page.height } }
    : {};
  const flat = flattenBackground(captured?.page ?? rendered);
  const turn = known ?? (linesRunDown(flat) ? 90 : 0);
  const upright = await turnPage(flat, turn);
  const t1 = performance.now();
  const { page, degrees } = await deskew(upright);
  const t2 = performance.now();
  const layout = { ...(await smallPrintLayout(page)), rotation: turn };
  return {
    page,
    degrees,
    turn,
    ...sheet,
    oneLine: false,
    layout,
    ms: { flatten: t1 - t0, deskew: t2 - t1, layout: performance.now() - t2 },
  };
}
