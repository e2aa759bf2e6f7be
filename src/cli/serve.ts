/**
 * `specula serve [--role all|api|worker]`: the API and a worker in one process (all, the default), or one of
 * them (the distributed mode, with SPECULA_REDIS_URL). Other settings come from the environment.
 */
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Engine } from '../engine/engine.js';
import { configFromEnv, engineOptions } from '../server/config.js';

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { role: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    console.log(
      'usage: specula serve [--role all|api|worker]   (settings from the environment: see README and docs/deploy.md)',
    );
    return 0;
  }
  const config = configFromEnv({ ...process.env, ...(values.role ? { SPECULA_ROLE: values.role } : {}) });
  // The model loads (its sessions are built on onnxruntime's threads and in the vision worker) while the API's
  // modules load on this one: both were ready in 0.96 s, against about 1.3 s one after the other, in one timed script.
  const opening =
    config.role === 'api' ? null : Engine.open(config.model, { ...engineOptions(config), collect: collector() });
  opening?.catch(() => undefined); // awaited below
  let running;
  try {
    const [{ startServer }, engine] = await Promise.all([import('../server/start.js'), opening]);
    running = await startServer(config, engine ? { engine } : {});
  } catch (e) {
    await (await opening?.catch(() => null))?.close();
    throw e;
  }
  const engine = await opening;
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      running.logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await running.close();
  await engine?.close(); // startServer leaves an engine it was given open
  return 0;
}

/**
 * V8's gc(), for the engine to call once it has let an idle batch's buffers go: their memory returns only when
 * they are collected (one sample-page job: the server's RSS at rest about 400 MB without, 345 MB with). The flag set
 * at run time makes a context created after it hold gc(), without `node --expose-gc` on every way of starting. The
 * context is made the first time it is called, not while the server starts (a new context: ~5 ms of its start).
 */
function collector(): () => void {
  let gc: (() => void) | null = null;
  return () => {
    if (!gc) {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    }
    gc();
  };
}
