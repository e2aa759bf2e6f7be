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

/** Read one image with tesseract; psm 7 treats it as a single text line, 3 as a full page. */
export async function tesseractRead(image: string, psm: 3 | 7 = 7): Promise<string> {
  const { stdout } = await run('tesseract', [image, 'stdout', '--psm', String(psm), '-l', 'eng'], {
    maxBuffer: 16 << 20,
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
  });
  return stdout.replace(/\f/g, '').trim();
}
