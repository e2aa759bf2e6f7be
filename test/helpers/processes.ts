/** Real Specula processes (and a throwaway redis-server) for the distributed tests, with their JSON logs. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HEAP_FLOOR_FLAG } from '../../src/cli/heap-floor.js';
import { SERVER_MALLOC_ENV } from '../../src/cli/malloc-arenas.js';
import { ROOT } from './fixtures.js';

export interface LogLine {
  msg?: string;
  port?: number;
  jobId?: string;
  worker?: string;
  status?: string;
  [k: string]: unknown;
}

export class SpeculaProcess {
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  private waiters: (() => void)[] = [];
  exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    let buf = '';
    proc.stdout?.on('data', (c: Buffer) => {
      buf += c.toString('utf8');
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          this.logs.push({ msg: line });
        }
        for (const w of this.waiters.splice(0)) w();
      }
    });
    proc.stderr?.on('data', (c: Buffer) => this.stderr.push(c.toString('utf8')));
    this.exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  }

  /** The first log line that satisfies `pred`, waiting up to `ms`. */
  async waitFor(pred: (l: LogLine) => boolean, ms = 60_000, what = 'a log line'): Promise<LogLine> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.logs.find(pred);
      if (hit) return hit;
      if (Date.now() > deadline || this.proc.exitCode !== null) {
        throw new Error(
          `${this.name}: no ${what} (exit ${this.proc.exitCode}); stderr: ${this.stderr.join('').slice(-2000)}`,
        );
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, 200);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.proc.exitCode === null) this.proc.kill(signal);
  }
}

/**
 * The CLI the processes run: the bundle, as every launcher runs it; SPECULA_TEST_CLI names another build's entry
 * (tsc's own output, e.g. dist-c/src/cli/main.js, to test a change without bundling it).
 */
const CLI = process.env.SPECULA_TEST_CLI ?? join(ROOT, 'bin', 'specula.js');

/**
 * `specula serve --role ROLE` as its own process, with the server launchers' malloc settings; resolves once it
 * listens (api: GraphQL; worker: health).
 */
export async function startSpecula(
  name: string,
  role: 'api' | 'worker' | 'all',
  env: Record<string, string>,
): Promise<{ p: SpeculaProcess; port: number }> {
  const proc = spawn(process.execPath, [HEAP_FLOOR_FLAG, CLI, 'serve', '--role', role], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...SERVER_MALLOC_ENV,
      PORT: '0',
      SPECULA_WORKER_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p = new SpeculaProcess(name, proc);
  const up = await p.waitFor((l) => typeof l.port === 'number', 60_000, 'listening line');
  return { p, port: up.port as number };
}

/** A redis-server of our own, persisting to an append-only file, so a test can restart it without losing data. */
export class RedisServer {
  readonly dir = mkdtempSync(join(tmpdir(), 'specula-redis-'));
  proc: ChildProcess | null = null;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.proc = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      if (await ping(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on ${this.port} did not start`);
  }

  /** A clean shutdown (what a restart is): Redis flushes its append-only file and exits. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
}

async function ping(port: number): Promise<boolean> {
  const { createConnection } = await import('node:net');
  return new Promise((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' }, () => s.write('PING\r\n'));
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    s.once('error', () => resolve(false));
  });
}
