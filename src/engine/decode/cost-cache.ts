/**
 * The forward-cost table `auto` draft lengths weigh acceptance against, kept on disk between processes. Measuring
 * it takes about three seconds on two cores; a CLI run reads one page in about as long, so every run after the
 * first on a machine reads it back instead. The key names everything the cost depends on: the decoder graph,
 * the device, the CPU, the thread count and onnxruntime's version. A missing, stale or unreadable file is only
 * a cache miss. `SPECULA_CACHE_DIR` moves it (default: the OS temp folder); `SPECULA_CACHE_DIR=off` disables it.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import * as z from 'zod';
import type { Bundle } from '../bundle/bundle.js';
import type { CostPoint } from '../strategies/draft-length.js';

const Points = z
  .array(
    z.object({ batch: z.number().int().positive(), perRow: z.number().int().positive(), ms: z.number().nonnegative() }),
  )
  .min(1);

/** How calibrate.ts measures: a table measured another way is not read back. */
const METHOD = 3;

function cachePath(bundle: Bundle): string | null {
  const dir = process.env.SPECULA_CACHE_DIR ?? join(tmpdir(), 'specula-cache');
  if (dir === 'off') return null;
  const cpu = cpus();
  const key = createHash('sha256')
    .update(
      JSON.stringify([
        METHOD,
        bundle.config.files.decoder.sha256,
        bundle.device,
        cpu[0]?.model ?? '',
        cpu.length,
        bundle.threads,
        ort.env.versions.common,
      ]),
    )
    .digest('hex')
    .slice(0, 24);
  return join(dir, `forward-costs-${key}.json`);
}

export function readCosts(bundle: Bundle): CostPoint[] | null {
  const path = cachePath(bundle);
  if (!path) return null;
  try {
    const parsed = Points.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function writeCosts(bundle: Bundle, points: readonly CostPoint[]): void {
  const path = cachePath(bundle);
  if (!path) return;
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    // Written whole, then renamed: a concurrent reader never sees half a file.
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(points));
    renameSync(tmp, path);
  } catch {
    // A read-only or full disk costs the next process a calibration, nothing more.
  }
}
