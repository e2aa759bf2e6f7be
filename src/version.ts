/** Specula's name and version (package.json's), for outputs that record what made them (hOCR, ALTO). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './package-root.js';

export const SOFTWARE_NAME = 'specula';

let cached: string | null = null;

export function softwareVersion(): string {
  cached ??= (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return cached;
}
