/** Errors the engine raises; `code` is stable so callers branch on it, never on the message. */
export const ENGINE_ERROR_CODES = [
  'BUNDLE_MISSING_FILE',
  'BUNDLE_CORRUPT_FILE',
  'BUNDLE_INVALID_CONFIG',
  'DEVICE_UNAVAILABLE',
  'INVALID_PRECISION',
  'INVALID_CROP',
  'REGIONS_UNSUPPORTED',
  'GOLDEN_MISMATCH',
  'INVALID_OPTIONS',
  'ENGINE_CLOSED',
  'CANCELLED',
] as const;
export type EngineErrorCode = (typeof ENGINE_ERROR_CODES)[number];

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  /** The file the error is about, where there is one. */
  readonly file?: string;

  constructor(code: EngineErrorCode, message: string, file?: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
    this.file = file;
  }
}
