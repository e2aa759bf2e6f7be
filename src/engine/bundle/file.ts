/**
 * A model bundle's file checked against the sha256 its config.json records: a truncated or altered graph is refused
 * by name. The vision worker checks its own graph before onnxruntime reads it, and then the decoder's and the
 * drafter heads' (VisionRunner.check) while the main thread builds the decoder's session, so this module imports
 * nothing heavy.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { EngineError } from '../errors.js';

/** A file of the bundle as config.json names it: its absolute path here, and the digest it must have. */
export interface BundleFile {
  path: string;
  sha256: string;
}

/**
 * One buffer for every file's chunks. A whole file read into a buffer of its own was garbage the moment it was
 * hashed, and a vision thread's small heap gives V8 little reason to collect: 13-17 MB of graph bytes sat in a vision
 * thread until its next collection, in the formula bundle's (a few passes a page) until a CLI run ended.
 */
const chunk = Buffer.allocUnsafe(1 << 20);

/**
 * Hash the file in chunks and compare; onnxruntime then reads the graph from its path. A file swapped between the two
 * would not be caught: the check is for damaged or mismatched files, not tampering (whoever can write the bundle's
 * folder can write its config.json).
 */
export function checkFile(file: BundleFile): void {
  let fd: number;
  try {
    fd = openSync(file.path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new EngineError('BUNDLE_MISSING_FILE', `model bundle file is missing: ${file.path}`, file.path);
    throw e;
  }
  const digest = createHash('sha256');
  try {
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) digest.update(chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  const hash = digest.digest('hex');
  if (hash !== file.sha256) {
    throw new EngineError(
      'BUNDLE_CORRUPT_FILE',
      `model bundle file is corrupt (sha256 ${hash.slice(0, 12)}…, ` +
        `config.json records ${file.sha256.slice(0, 12)}…): ${file.path}`,
      file.path,
    );
  }
}
