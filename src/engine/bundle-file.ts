/**
 * A model bundle's file read and checked against the sha256 its config.json records: a truncated or altered graph
 * is refused by name. The vision worker reads its own graph this way before onnxruntime sees it, and then checks the
 * decoder's and the drafter heads' (VisionRunner.check) while the main thread builds the decoder's session from its
 * path, so this module imports nothing heavy.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EngineError } from './errors.js';

/** A file of the bundle as config.json names it: its absolute path here, and the digest it must have. */
export interface BundleFile {
  path: string;
  sha256: string;
}

export function checkedBytes(file: BundleFile): Uint8Array {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file.path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new EngineError('BUNDLE_MISSING_FILE', `model bundle file is missing: ${file.path}`, file.path);
    throw e;
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  if (hash !== file.sha256) {
    throw new EngineError('BUNDLE_CORRUPT_FILE', `model bundle file is corrupt (sha256 ${hash.slice(0, 12)}…, config.json records ${file.sha256.slice(0, 12)}…): ${file.path}`, file.path);
  }
  return bytes;
}
