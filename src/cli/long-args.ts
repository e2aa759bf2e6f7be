/**
 * A command line too long for onnxruntime. Opening a session recurses over something that grows with the process's
 * command line (measured: 150 paths of 100 characters, 15 KB, overflow a worker thread's stack; 150 KB the main
 * thread's), so `specula parse` over a folder of scans crashed (SIGSEGV) before reading a page. Past ARGS_LIMIT the
 * CLI starts itself again with the arguments in a file (ARGS_FILE names it) and a short command line of its own.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** Bytes of arguments past which they travel in a file: well under the 15 KB that crashed a worker thread. */
export const ARGS_LIMIT = 8 * 1024;
const ARGS_FILE = 'SPECULA_ARGS_FILE';
const PREFIX = 'specula-args-';

/**
 * This process's arguments, and whether they must move off its command line first: those a parent handed over in a
 * file (which is then removed) never move again; its own do when they are too long.
 */
export function commandArgs(): { args: string[]; tooLong: boolean } {
  const file = process.env[ARGS_FILE];
  // Only a folder this CLI made is read and removed: the variable is no way to delete someone's files.
  const ours = file !== undefined && dirname(dirname(file)) === tmpdir() && basename(dirname(file)).startsWith(PREFIX);
  if (!file || !ours) {
    const args = process.argv.slice(2);
    return { args, tooLong: args.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0) > ARGS_LIMIT };
  }
  delete process.env[ARGS_FILE];
  try {
    return { args: readFileSync(file, 'utf8').split('\0'), tooLong: false };
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

/** Run this CLI again with `args` in a file; resolves with its exit code (its output is this process's). */
export function rerunWithArgsFile(args: readonly string[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  const file = join(dir, 'args');
  writeFileSync(file, args.join('\0'));
  const env = { ...process.env, [ARGS_FILE]: file };
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]], { stdio: 'inherit', env });
  return new Promise((resolve) => {
    // Killed by a signal: the shell's convention, 128 + its number.
    child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
    child.on('error', () => {
      rmSync(dir, { recursive: true, force: true });
      resolve(1);
    });
  });
}
