/**
 * sharp, loaded on first use: loading it (libvips, and the checks of its platform package) took about 60 ms of the
 * server's start on the 2-core host, before any document had come. The server loads it once it is ready
 * (start.ts), so the first job does not wait for it either.
 */
import type SharpModule from 'sharp';
import type { Sharp as SharpImage } from 'sharp';
import type { GrayPage } from './decode-image.js';

export type Sharp = typeof SharpModule;

let loading: Promise<Sharp> | null = null;

export function loadSharp(): Promise<Sharp> {
  loading ??= import('sharp').then((m) => m.default);
  return loading;
}

/** A grey page through a sharp pipeline (`op`: a turn, a resize), back as a grey page. */
export async function throughSharp(page: GrayPage, op: (img: SharpImage) => SharpImage): Promise<GrayPage> {
  const sharp = await loadSharp();
  const { data, info } = await op(sharp(page.data, { raw: { width: page.width, height: page.height, channels: 1 } }))
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 1) throw new Error(`a grey page came back from sharp with ${info.channels} channels`);
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}
