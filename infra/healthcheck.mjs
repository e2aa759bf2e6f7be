// The images' HEALTHCHECK: GET /healthz on this container's own server, with node's fetch (slim images have no
// curl). The port follows the role the way the server picks it: `serve --role worker` (or SPECULA_ROLE=worker)
// answers on SPECULA_WORKER_PORT (default 4001); api and all answer on PORT (default 4000). The role is read from
// the command line of the container's main process, because a HEALTHCHECK sees the image's environment but not
// the arguments the container was started with. Exit 0: healthy; exit 1: not.
import { readFileSync } from 'node:fs';

function roleFromArgs() {
  let args;
  try {
    // PID 1 is node itself (exec-form ENTRYPOINT), or docker-init/tini with node's arguments after `--`.
    args = readFileSync('/proc/1/cmdline', 'utf8').split('\0');
  } catch {
    return undefined;
  }
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--role' && args[i + 1]) return args[i + 1];
    if (args[i].startsWith('--role=')) return args[i].slice('--role='.length);
  }
  return undefined;
}

const role = roleFromArgs() ?? (process.env.SPECULA_ROLE || 'all');
const port = role === 'worker' ? process.env.SPECULA_WORKER_PORT || '4001' : process.env.PORT || '4000';

try {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
