/** Tesseract on the same inputs, as the baseline every accuracy and speed figure sits beside. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function tesseractVersion(): Promise<string | null> {
  try {
    const { stdout, stderr } = await run('tesseract', ['--version']);
    return (stdout || stderr).split('\n')[0].trim();
  } catch {
    return null;
  }
}

/**
 * tesseract's arguments for one image: psm 7 treats it as a single text line, 3 as a full page. Its language model is
 * part of what it reads with: a Polish line is fairly read with `pol` (tesseract-ocr-pol); `lang` names the pack, else
 * SPECULA_TESSERACT_LANG, else English.
 */
export function tesseractArgs(image: string, psm: 3 | 7, lang?: string): string[] {
  return [image, 'stdout', '--psm', String(psm), '-l', lang ?? process.env.SPECULA_TESSERACT_LANG ?? 'eng'];
}

/** One process per core, each on one thread, as every comparison here runs it. */
export const TESSERACT_ENV = { OMP_THREAD_LIMIT: '1' } as const;

/** tesseract's page text: form feeds gone, trimmed. */
export function tesseractText(stdout: string): string {
  return stdout.replace(/\f/g, '').trim();
}

/** Read one image with tesseract. */
export async function tesseractRead(image: string, psm: 3 | 7 = 7, lang?: string): Promise<string> {
  const { stdout } = await run('tesseract', tesseractArgs(image, psm, lang), {
    maxBuffer: 16 << 20,
    env: { ...process.env, ...TESSERACT_ENV },
  });
  return tesseractText(stdout);
}
