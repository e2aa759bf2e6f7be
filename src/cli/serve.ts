/** `specula serve`: the API and a worker in one process (the embedded mode). Settings come from the environment. */
import { configFromEnv } from '../server/config.js';
import { startServer } from '../server/embedded.js';

export async function serveCommand(args: string[]): Promise<number> {
  if (args.includes('--help')) {
    console.log('usage: specula serve   (PORT, SPECULA_API_KEYS or SPECULA_API_KEYS_FILE or SPECULA_ALLOW_ANONYMOUS=1; see README)');
    return 0;
  }
  const running = await startServer(configFromEnv());
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
