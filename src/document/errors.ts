/** Errors about the input document; `code` is stable, and `file` names the input the error is about. */
export const DOCUMENT_ERROR_CODES = [
  'EMPTY_INPUT',
  'UNSUPPORTED_FORMAT',
  'CORRUPT_IMAGE',
  'IMAGE_TOO_LARGE',
  'IMAGE_TOO_SMALL',
  'CORRUPT_PDF',
  'ENCRYPTED_PDF',
  'EMPTY_DOCUMENT',
  'TOO_MANY_PAGES',
  'PAGE_OUT_OF_RANGE',
  'INVALID_PAGE_RANGE',
] as const;
export type DocumentErrorCode = (typeof DOCUMENT_ERROR_CODES)[number];

export class DocumentError extends Error {
  readonly code: DocumentErrorCode;
  readonly file: string;

  constructor(code: DocumentErrorCode, file: string, message: string) {
    super(`${file}: ${message}`);
    this.name = 'DocumentError';
    this.code = code;
    this.file = file;
  }
}
