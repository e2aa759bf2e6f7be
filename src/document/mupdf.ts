/**
 * mupdf (compiled to WebAssembly), loaded on first use: instantiating it took about 75 ms of every start-up, CLI
 * and server alike, whether or not a PDF ever came (a page image never needs it).
 *
 * mupdf reports repairs of damaged files and missing objects on its log, not as exceptions: a PDF cut short opens
 * (repaired) and its pages render blank. The log is kept off the console and read after each call (mupdf's calls
 * are synchronous, so the messages after a call are that call's).
 */
import type * as Mupdf from 'mupdf';

export type MupdfModule = typeof Mupdf;

const said: string[] = [];
let loading: Promise<MupdfModule> | null = null;

export function loadMupdf(): Promise<MupdfModule> {
  loading ??= import('mupdf').then((m) => {
    m.setLog({ error: (msg: string) => void said.push(msg), warning: (msg: string) => void said.push(msg) });
    return m;
  });
  return loading;
}

/** What mupdf has logged since the last call. */
export function drainMupdfLog(): string[] {
  return said.splice(0, said.length);
}
