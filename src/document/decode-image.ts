/**
 * Image bytes -> one grey page. The format is sniffed from magic bytes, the pixel count is checked from the
 * header before any pixel is decoded, EXIF orientation is applied, and every failure is a DocumentError
 * that names the file.
 */
import type { Metadata } from 'sharp';
import { loadSharp } from './sharp.js';
import { DocumentError } from './errors.js';
import { sniffOrRefuse } from './sniff.js';

export interface GrayPage {
  width: number;
  height: number;
  data: Uint8Array; // 1 byte per pixel, row-major
}

export interface ImageLimits {
  /** Refuse images with more pixels than this (checked from the header, before decoding). */
  maxPixels: number;
}

export const DEFAULT_LIMITS: ImageLimits = { maxPixels: 100_000_000 };

/** `page` picks one page of a multi-page image (TIFF); pixel limits apply to that page. */
export async function decodeImage(
  bytes: Uint8Array,
  file: string,
  limits: ImageLimits = DEFAULT_LIMITS,
  page?: number,
): Promise<GrayPage> {
  const format = sniffOrRefuse(bytes, file, 'image');
  if (format === 'pdf')
    throw new DocumentError('UNSUPPORTED_FORMAT', file, 'a PDF is a document, not an image: open it with openSource');
  const which = page === undefined ? {} : { page };
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false, ...which }).metadata();
  } catch (e) {
    throw new DocumentError(
      'CORRUPT_IMAGE',
      file,
      `the ${format.toUpperCase()} header cannot be read (${(e as Error).message})`,
    );
  }
  const w = meta.width ?? 0;
  // For a multi-page image sharp reports the stack's height unless one page is opened.
  const h = meta.pageHeight ?? meta.height ?? 0;
  if (w * h > limits.maxPixels) {
    throw new DocumentError(
      'IMAGE_TOO_LARGE',
      file,
      `${w}x${h} is ${w * h} pixels, over the limit of ${limits.maxPixels}`,
    );
  }
  if (w < 8 || h < 8) throw new DocumentError('IMAGE_TOO_SMALL', file, `${w}x${h} is too small to hold text`);
  try {
    // failOn 'warning': random bytes in a JPEG's scan data are only a warning to libjpeg ("Corrupt JPEG data"); at
    // 'error' such a file decoded to noise and its job "succeeded" with nothing read.
    const { data, info } = await sharp(bytes, { limitInputPixels: limits.maxPixels, failOn: 'warning', ...which })
      .rotate()
      .flatten({ background: '#ffffff' })
      .grayscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 1) throw new Error(`expected 1 channel, got ${info.channels}`);
    return {
      width: info.width,
      height: info.height,
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    };
  } catch (e) {
    throw new DocumentError(
      'CORRUPT_IMAGE',
      file,
      `the ${format.toUpperCase()} data cannot be decoded (${(e as Error).message})`,
    );
  }
}
