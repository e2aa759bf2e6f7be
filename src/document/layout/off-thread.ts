/**
 * Layout analysis off the main thread. onnxruntime-node runs its sessions on the main thread, so a page's
 * layout (a few hundred milliseconds of JavaScript) there would stall decoding, and the server's answers, for
 * that long. In a worker thread it overlaps the decoding of the lines already submitted: the next page of a
 * document, or another job's page. One thread on a small machine, where onnxruntime has the other cores.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { GrayPage } from '../decode-image.js';
import type { PageLayout } from './analyze.js';

let pool: Piscina<GrayPage, PageLayout> | null = null;

export function analyzeLayoutOffThread(page: GrayPage): Promise<PageLayout> {
  pool ??= new Piscina<GrayPage, PageLayout>({
    filename: new URL('./layout-worker.js', import.meta.url).href,
    minThreads: 0,
    maxThreads: Math.max(1, Math.min(4, availableParallelism() - 1)),
    // Idle threads go, so a CLI run ends when its work does.
    idleTimeout: 2000,
  });
  return pool.run(page);
}
