import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from './helpers/fixtures.js';

const run = promisify(execFile);
const BENCH = join(ROOT, 'dist', 'bench');
const SCRIPTS = readdirSync(BENCH).filter((f) => f.endsWith('.bench.js') || f === 'pages-reader.js');

async function bench(script: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(BENCH, script), ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('bench scripts on the command line', () => {
  it('finds every bench script', () => assert.ok(SCRIPTS.length >= 10, SCRIPTS.join(' ')));

  for (const script of SCRIPTS) {
    it(`${script} prints its usage for --help and names an unknown option beside it`, async () => {
      const help = await bench(script, '--help');
      assert.equal(help.code, 0, help.stderr);
      assert.ok(help.stdout.trim().length > 80, 'a usage, not an empty line');
      const bad = await bench(script, '--no-such-option');
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /Unknown option '--no-such-option'/);
      assert.ok(bad.stderr.includes(help.stdout.trim().split('\n')[0]), 'the usage follows the error');
    });
  }
});
