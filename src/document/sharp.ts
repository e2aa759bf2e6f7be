/**
 * sharp, loaded on first use: loading it (libvips, and the checks of its platform package) took about 60 ms of the
 * server's start on the 2-core host, before any document had come. The server loads it once it is ready
 * (start.ts), so the first job does not wait for it either.
 */
import type SharpModule from 'sharp';

export type Sharp = typeof SharpModule;

let loading: Promise<Sharp> | null = null;

export function loadSharp(): Promise<Sharp> {
  loading ??= import('sharp').then((m) => m.default);
  return loading;
}
