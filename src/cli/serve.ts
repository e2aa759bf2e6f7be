/**
 * `specula serve [--role all|api|worker]`: the API and a worker in one process (all, the default), or one of
 * them (the distributed mode, with SPECULA_REDIS_URL). Other settings come from the environment.
 */
import { parseArgs } from 'node:util';
import { configFromEnv } from '../server/config.js';
import { startServer } from '../server/start.js';

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { role: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    console.log('usage: specula serve [--role all|api|worker]   (settings from the environment: see README and infra/README.md)');
    return 0;
  }
  const running = await startServer(configFromEnv({ ...process.env, ...(values.role ? { SPECULA_ROLE: values.role } : {}) }));
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      running.logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await running.close();
  return 0;
}
