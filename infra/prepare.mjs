// npm's prepare: build after `npm install` and `npm ci`. Under `npx specula` (npm_command "exec") npm installs the
// clone into its cache and runs prepare again, which rebuilt dist/ under any server running from it: there the
// build is skipped when one exists.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const built = existsSync(new URL('../dist/bundle/main.js', import.meta.url));
if (process.env.npm_command === 'exec' && built) process.exit(0);
const npm = process.env.npm_execpath;
const r = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
