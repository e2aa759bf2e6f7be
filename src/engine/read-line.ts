/** Reading one line crop, whole or in pieces (vision/wide-crops.ts): too wide, or too many characters to read whole. */
import type { EvidenceFit } from './ctc/score.js';
import type { LineOutput } from './decode/sequence.js';
import type { GrayCrop } from './vision/preprocess.js';
import { type CropPiece, cutWideCrop, joinPieces, type PieceReading, PieceStream } from './vision/wide-crops.js';

/** A line's committed tokens as text, as they are decided; fromDraft marks tokens of an accepted draft. */
export type Tokens = (text: string, fromDraft: readonly boolean[], drafted: number) => void;

/** What reading a line needs of the engine and of the request it belongs to. */
export interface LineReader {
  /** Read one item through the scheduler; past `maxChars` CTC characters it comes back undecoded (tooLong). */
  readOne: (
    crops: readonly GrayCrop[],
    maxChars: number | undefined,
    tokens: Tokens | undefined,
    evidence?: string,
  ) => Promise<LineOutput>;
  decoded: (ids: readonly number[]) => string;
  /** The bundle's line height and the widest crop one vision pass takes. */
  height: number;
  maxWidth: number;
  /** The engine's readChars and readWidth, and a wide crop's pieces as it cuts them (once per crop). */
  readChars: number | undefined;
  readWidth: number;
  piecesOf: (crop: GrayCrop) => CropPiece[];
}

/**
 * One line crop, whole or in pieces (vision/wide-crops.ts). Wider than a vision pass takes: in pieces of readWidth.
 * Otherwise whole, unless the CTC head reads more than readChars characters on it (the scheduler then sends it
 * back undecoded): then in pieces sized to hold about readChars each. Pieces are read the same way in turn.
 */
export async function readLine(
  r: LineReader,
  crop: GrayCrop,
  tokens: Tokens | undefined,
  judge = true,
  evidence?: string,
): Promise<PieceReading & { ids?: number[]; fit?: EvidenceFit }> {
  const { maxWidth, height, readChars, decoded } = r;
  let pieces: CropPiece[];
  let fit: EvidenceFit | undefined;
  if (crop.width > maxWidth) pieces = r.piecesOf(crop);
  else {
    // A piece a few letters wide, or one the cut could not shorten, is read whole whatever its count.
    const limit = judge && readChars !== undefined && crop.width > 4 * height ? readChars : undefined;
    const out = await r.readOne([crop], limit, tokens, evidence);
    if (!out.tooLong) {
      return {
        text: decoded(out.ids),
        ids: out.ids,
        confidence: out.confidence,
        ctcText: decoded(out.ctc),
        ...(out.glyphs ? { glyphs: out.glyphs[0] } : {}),
        ...(out.unread ? { unread: true } : {}),
        ...(out.fit ? { fit: out.fit } : {}),
      };
    }
    pieces = cutWideCrop(
      crop,
      Math.min(r.readWidth, Math.floor((crop.width * (readChars ?? 1)) / out.ctc.length)),
      maxWidth,
    );
    fit = out.fit;
  }
  const stream = tokens ? new PieceStream(pieces.length, tokens) : null;
  const readings = await Promise.all(
    pieces.map((p, j) =>
      readLine(
        r,
        p.crop,
        stream ? (text, fromDraft, drafted) => stream.tokens(j, text, fromDraft, drafted) : undefined,
        pieces.length > 1,
      ).then((reading) => {
        stream?.finished(j);
        return reading;
      }),
    ),
  );
  return { ...joinPieces(pieces, readings), ...(fit ? { fit } : {}) };
}
