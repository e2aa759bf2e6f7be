import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import semver from 'semver';
import ts from 'typescript';
import { HEAP_FLOOR_FLAG } from '../src/cli/heap-floor.js';
import { TIERING_FLAG, tieringFlagFor } from '../src/cli/tiering.js';
import { MALLOC_ARENAS_ENV, SERVER_MALLOC_ENV } from '../src/cli/malloc-arenas.js';
import { ROOT } from './helpers/fixtures.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
  optionalDependencies?: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; hasInstallScript?: boolean }>;
};

/** The lowest release of each Node line package.json accepts. */
const LINES = ['20.19.0', '22.12.0', '24.0.0'];

describe('a clean install', () => {
  it('supports the maintained Node LTS lines (22, 24) and 20.19+, and says so in engines', () => {
    for (const v of LINES) assert.ok(semver.satisfies(v, pkg.engines.node), `engines ${pkg.engines.node} takes ${v}`);
    assert.ok(!semver.satisfies('20.18.0', pkg.engines.node), 'not Node 20 before 20.19 (@sentry/node wants it)');
  });

  it('locks no package whose engines refuse one of those lines (npm would warn EBADENGINE)', () => {
    const refused: string[] = [];
    for (const [path, p] of Object.entries(lock.packages)) {
      const want = Array.isArray(p.engines) ? undefined : p.engines?.node;
      if (!path || !want) continue;
      for (const v of LINES)
        if (!semver.satisfies(v, want)) refused.push(`${path}@${p.version} wants node ${want}, refuses ${v}`);
    }
    assert.deepEqual(refused, []);
  });

  it('has no project .npmrc keys npm does not know, and says which install scripts run', () => {
    assert.equal(existsSync(join(ROOT, '.npmrc')), false, 'npm 11 warns "Unknown project config" on every command');
    const scripted = Object.entries(lock.packages)
      .filter(([path, p]) => path && p.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    for (const name of scripted)
      assert.ok(name in (pkg.allowScripts ?? {}), `${name}'s install script is reviewed in allowScripts`);
    assert.equal(pkg.allowScripts?.['onnxruntime-node'], false, 'its script only downloads the CUDA provider');
  });

  it('compiles with its optional dependencies left out (one removed after the install, or skipped by npm)', () => {
    // The build runs on install (prepare): the project's own compiler, over the project, with each optional
    // package's folder hidden from module resolution.
    const hidden = Object.keys(pkg.optionalDependencies ?? {}).map((name) => `/node_modules/${name}/`);
    assert.ok(hidden.length > 0, 'package.json has optional dependencies to leave out');
    const isHidden = (path: string): boolean => hidden.some((h) => `${path}/`.includes(h));
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.json'),
      { noEmit: true },
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      },
    );
    assert.ok(parsed);
    const host = ts.createCompilerHost(parsed.options);
    const { fileExists, directoryExists } = host;
    host.fileExists = (path) => !isHidden(path) && fileExists.call(host, path);
    host.directoryExists = (path) =>
      !isHidden(path) && (directoryExists?.call(host, path) ?? ts.sys.directoryExists(path));
    const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host });
    const loaded = program
      .getSourceFiles()
      .filter((f) => isHidden(f.fileName))
      .map((f) => f.fileName);
    assert.deepEqual(loaded, [], 'no optional package was read');
    const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(errors, []);
  });

  it('builds on npm install, but not again under `npx specula` where a build exists', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.prepare, 'node infra/prepare.mjs');
    const bundle = join(ROOT, 'dist', 'bundle', 'main.js');
    const before = statSync(bundle).mtimeMs;
    const env = { ...process.env, npm_command: 'exec', npm_execpath: '/nonexistent/npm-cli.js' };
    await promisify(execFile)(process.execPath, [join(ROOT, 'infra', 'prepare.mjs')], { cwd: ROOT, env });
    assert.equal(statSync(bundle).mtimeMs, before, 'dist/ untouched');
  });
});

describe('how Specula processes start', () => {
  it(
    'every launcher gives V8 the same old-space floor and glibc the same ' +
      "arena cap, the server's launchers huge pages too, and the CLI runs " +
      'through its own shebang',
    async () => {
      const scripts = (
        JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
      ).scripts;
      const bin = readFileSync(join(ROOT, 'bin', 'specula.js'), 'utf8').split('\n')[0];
      const assignments = (env: Record<string, string>): string =>
        Object.entries(env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ');
      const arenas = assignments(MALLOC_ARENAS_ENV);
      assert.equal(bin, `#!/usr/bin/env -S ${arenas} node ${HEAP_FLOOR_FLAG}`);
      assert.ok(scripts.eval.startsWith(`${arenas} node ${HEAP_FLOOR_FLAG} `), `npm run eval: ${scripts.eval}`);
      // The server's launchers add huge pages for malloc (a faster start-up, some memory): malloc-arenas.ts says why.
      assert.ok(
        scripts.start.startsWith(`${assignments(SERVER_MALLOC_ENV)} node ${HEAP_FLOOR_FLAG} `),
        `npm start: ${scripts.start}`,
      );
      for (const file of ['Dockerfile.cpu', 'Dockerfile.cuda']) {
        const text = readFileSync(join(ROOT, 'infra', file), 'utf8');
        const entry = text.split('\n').find((l) => l.startsWith('ENTRYPOINT'));
        assert.equal(entry, `ENTRYPOINT ["node", "${HEAP_FLOOR_FLAG}", "dist/bundle/main.js"]`, file);
        for (const [k, v] of Object.entries(SERVER_MALLOC_ENV))
          assert.match(
            text,
            new RegExp(`^ENV [^]*?\\s${k}=${v.replace(/\./g, '\\.')}(\\s|$)`, 'm'),
            `${file} sets ${k} for its runtime stage`,
          );
      }
      // Run as a user's shell runs it (npx links it): the kernel reads the shebang, env -S splits its arguments and
      // sets the variable.
      const { stdout } = await promisify(execFile)(join(ROOT, 'bin', 'specula.js'), ['--version'], { cwd: ROOT });
      assert.match(stdout, /^\d+\.\d+\.\d+\n$/);
      const { stdout: seen } = await promisify(execFile)(
        '/usr/bin/env',
        ['-S', bin.slice('#!/usr/bin/env -S '.length), '-e', 'console.log(process.env.MALLOC_ARENA_MAX)'],
        { cwd: ROOT },
      );
      assert.equal(seen.trim(), MALLOC_ARENAS_ENV.MALLOC_ARENA_MAX);
    },
  );

  it(
    "Node 20's V8 gets the raised tier-up budget before any command's " +
      'modules load, and later V8s, which refuse the flag, keep their own',
    () => {
      assert.equal(tieringFlagFor('11.3.244.8-node.33'), TIERING_FLAG);
      assert.equal(tieringFlagFor('12.4.254.21-node.33'), null);
      assert.equal(tieringFlagFor('13.6.233.10-node.30'), null);
      // The bundle's entry sets it before it loads a command (the engine, the layout and the server come by import()),
      // and the few chunks it imports statically ahead of it hold none of them.
      const main = readFileSync(join(ROOT, 'dist', 'bundle', 'main.js'), 'utf8');
      const set = main.indexOf(TIERING_FLAG);
      assert.ok(set > 0, 'dist/bundle/main.js sets the tiering flag');
      const before = main.slice(0, set);
      assert.ok(!/import\(/.test(before), 'no dynamic import runs before it');
      for (const [, chunk] of before.matchAll(/"\.\/(chunk-[\w-]+\.js)"/g)) {
        const code = readFileSync(join(ROOT, 'dist', 'bundle', chunk), 'utf8');
        for (const heavy of ['InferenceSession', 'inkCount', 'createYoga'])
          assert.ok(!code.includes(heavy), `${chunk}, imported ahead of the flag, holds ${heavy}`);
      }
    },
  );
});
