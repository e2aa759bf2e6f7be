/** Specula's name and version (package.json's), for outputs that record what made them (hOCR, ALTO). */
import { readFileSync } from 'node:fs';

export const SOFTWARE_NAME = 'specula';

let cached: string | null = null;

export function softwareVersion(): string {
  cached ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return cached;
}
