/**
 * The folder Specula is installed in (package.json, models/, src/playground/), found by walking up from this
 * module: it runs from dist/src/ as tsc writes it, and from dist/bundle/ as infra/bundle.mjs writes it, so a fixed
 * number of `..` would be right in one of the two only.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`no package.json above ${from}: Specula's files are not where it was installed`);
  }
}

export const PACKAGE_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));
