/**
 * Cold start and resting memory of the embedded server (`npm start`: the API and a worker in one process): from
 * spawning it to its first `/readyz` 200, over several starts; then, in one more start, its RSS idle, after one
 * sample-page job (1 s and 5 s after it), and its peak (Linux's VmHWM). Beside npm start, the same server unbundled
 * (dist/src, in the same run: what infra/bundle.mjs saves). Optionally the same start under other Node binaries
 * (`--node /path/to/node,...`), run as `node --initial-old-space-size=64 dist/bundle/main.js serve` (as npm start runs
 * it) since npm starts with the Node on PATH.
 *
 *   npm run bench:start -- [--runs 5] [--node PATHS] [--out bench/results/start.json]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { HEAP_FLOOR_FLAG } from '../src/cli/heap-floor.js';
import { SERVER_MALLOC_ENV } from '../src/cli/malloc-arenas.js';
import { ApiClient } from '../test/helpers/api-client.js';
import { median, ROOT, writeReport } from './lines.js';
import { benchOptions } from './bench-args.js';

const { values } = benchOptions(import.meta.url, {
  options: {
    runs: { type: 'string', default: '5' },
    node: { type: 'string', default: '' },
    out: { type: 'string', default: 'bench/results/start.json' },
  },
});
const runs = Number(values.runs);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const ENV = { SPECULA_ALLOW_ANONYMOUS: '1', HOST: '127.0.0.1', LOG_LEVEL: 'silent' };

/**
 * The server's own process: npm runs it through a shell, so it is the node descendant of what was spawned (a
 * SIGTERM to npm does not reach it).
 */
function serverPid(root: number): number {
  const children = (pid: number): number[] => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift() as number;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (/node$/.test(argv[0]) && argv.some((a) => a.endsWith('main.js'))) return pid;
    queue.push(...children(pid));
  }
  throw new Error('the server process was not found');
}

function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  process.kill(serverPid(proc.pid as number), 'SIGTERM');
  await exited;
}

/** Spawn, then poll /readyz every 5 ms; the milliseconds from spawn to its first 200. */
async function start(command: string, args: string[]): Promise<{ proc: ChildProcess; ms: number; port: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...SERVER_MALLOC_ENV, ...ENV, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited with ${proc.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { proc, ms: performance.now() - t0, port };
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function coldStarts(
  label: string,
  command: string,
  args: string[],
): Promise<{ label: string; ms: number[]; medianMs: number }> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = await start(command, args);
    ms.push(Math.round(s.ms));
    await stop(s.proc);
  }
  console.log(`${label}: ${ms.join(', ')} ms to /readyz 200 (median ${median(ms)})`);
  return { label, ms, medianMs: median(ms) };
}

const npmBin = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const rows = [await coldStarts('npm start', npmBin, ['start', '--silent'])];
// The same server from dist/src, the modules tsc wrote, one file each: what the bundle (infra/bundle.mjs) saves.
rows.push(
  await coldStarts(`node ${HEAP_FLOOR_FLAG} dist/src/cli/main.js serve (unbundled)`, process.execPath, [
    HEAP_FLOOR_FLAG,
    join('dist', 'src', 'cli', 'main.js'),
    'serve',
  ]),
);
for (const node of values.node.split(',').filter(Boolean)) {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  rows.push(
    await coldStarts(`node ${version} ${HEAP_FLOOR_FLAG} dist/bundle/main.js serve`, node, [
      HEAP_FLOOR_FLAG,
      join('dist', 'bundle', 'main.js'),
      'serve',
    ]),
  );
}

// Memory: idle once ready (after a second), after one sample-page job (and a second more), and the peak.
const s = await start(npmBin, ['start', '--silent']);
const pid = serverPid(s.proc.pid as number);
await new Promise((r) => setTimeout(r, 1000));
const idleMb = status(pid, 'VmRSS');
const client = new ApiClient(`http://127.0.0.1:${s.port}`);
const created = await client.upload<{ createParseJob: { id: string } }>(
  'mutation($input: CreateParseJobInput!) { createParseJob(input: $input) { id } }',
  { input: { file: null } },
  ['input', 'file'],
  readFileSync(join(ROOT, 'examples', 'sample-page.png')),
  'sample-page.png',
);
if (!created.data) throw new Error(JSON.stringify(created.errors));
const events = await client.sse<{ parseJobEvents: { __typename: string } }>(
  'subscription($id: ID!) { parseJobEvents(id: $id) { __typename } }',
  { id: created.data.createParseJob.id },
);
const last = events[events.length - 1]?.data?.parseJobEvents.__typename;
if (last !== 'JobDone') throw new Error(`the job ended with ${last}`);
await new Promise((r) => setTimeout(r, 1000));
const afterJobMb = status(pid, 'VmRSS');
// At rest: past the engine's idle release (2 s), when it has let its batch buffers go.
await new Promise((r) => setTimeout(r, 4000));
const restingMb = status(pid, 'VmRSS');
const peakMb = status(pid, 'VmHWM');
await stop(s.proc);
console.log(
  `RSS: idle ${idleMb} MB; after one sample-page job ${afterJobMb} MB at ` +
    `1 s, ${restingMb} MB at 5 s; peak ${peakMb} MB`,
);

writeReport(values.out, {
  created: new Date().toISOString(),
  node: process.version,
  what:
    'milliseconds from spawning the embedded server to its first /readyz ' +
    '200 (polled every 5 ms); RSS of the server process',
  starts: rows,
  memory: { idleMb, afterJobMb, restingMb, peakMb },
});
console.log(`written to ${values.out}`);
