/** What a file is, from its first bytes (never from its name). */
import { DocumentError } from './errors.js';

export type ImageFormat = 'png' | 'jpeg' | 'tiff' | 'webp' | 'gif' | 'bmp';
export type SniffedFormat = ImageFormat | 'pdf';

const startsWith = (b: Uint8Array, sig: number[], at = 0): boolean => sig.every((x, i) => b[at + i] === x);

export function sniffFormat(bytes: Uint8Array): SniffedFormat | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return 'webp';
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return 'gif';
  if (startsWith(bytes, [0x42, 0x4d])) return 'bmp';
  if (startsWith(bytes, [0x25, 0x50, 0x44, 0x46, 0x2d])) return 'pdf';
  return null;
}

const KINDS = {
  document: 'document (PDF, PNG, JPEG, TIFF, WebP, GIF, BMP)',
  image: 'image (PNG, JPEG, TIFF, WebP, GIF, BMP)',
};

/** Why bytes of no format that is read are refused, in words. */
export const unsupportedFormat = (kind: keyof typeof KINDS): string =>
  `not a supported ${kind === 'document' ? KINDS.document : KINDS.image}: its first bytes match none of them`;

/** The bytes' format; refused as EMPTY_INPUT or UNSUPPORTED_FORMAT where there is none. */
export function sniffOrRefuse(bytes: Uint8Array, file: string, kind: keyof typeof KINDS): SniffedFormat {
  if (bytes.length === 0) throw new DocumentError('EMPTY_INPUT', file, 'the file is empty');
  const format = sniffFormat(bytes);
  if (format === null) throw new DocumentError('UNSUPPORTED_FORMAT', file, unsupportedFormat(kind));
  return format;
}
