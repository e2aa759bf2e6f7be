/**
 * The engine on WebGPU, on whatever adapter this machine's Vulkan offers: in CI, Mesa's software lavapipe (.ci/run
 * installs it). The GPU path reads what the CPU path reads, every lossless pairing keeps its verifier's text there,
 * and a device asked for and absent fails by its typed error. Without an adapter these tests fail under CI and are
 * skipped elsewhere, saying why.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import * as ort from 'onnxruntime-node';
import { decodeImage } from '../src/document/decode-image.js';
import { cropLineImage } from '../src/document/line-image.js';
import { closeBundle, DEFAULT_BUNDLE, loadBundle } from '../src/engine/bundle/bundle.js';
import { autoCandidates, vulkanDrivers } from '../src/engine/bundle/device.js';
import { Engine } from '../src/engine/engine.js';
import { EngineError } from '../src/engine/errors.js';
import type { DecodingOptionsInput } from '../src/engine/strategies/options.js';
import type { GrayCrop } from '../src/engine/vision/preprocess.js';
import { loadLineSet } from '../src/eval/line-sets.js';
import { EVAL_DIR, modelSpec } from './helpers/eval-lines.js';
import { ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';

const run = promisify(execFile);
const BIN = join(ROOT, 'bin', 'specula.js');
process.env.XDG_RUNTIME_DIR ??= '/tmp';

/** Whether a WebGPU adapter answers here: a session of the smallest graph the bundle ships opens on it. */
async function adapterAnswers(): Promise<string | null> {
  try {
    const s = await ort.InferenceSession.create(join(DEFAULT_BUNDLE, 'mtp.onnx'), {
      executionProviders: ['webgpu'],
      logSeverityLevel: 3,
    });
    await s.release();
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

async function specula(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const absent = await adapterAnswers();
const skip =
  absent && !process.env.CI
    ? `no WebGPU adapter here (${absent.split('\n')[0]}); .ci/run installs Mesa's lavapipe`
    : false;

describe('the engine on WebGPU', { skip }, () => {
  let gpu: Engine;
  let cpu: Engine;
  let lines: GrayCrop[];

  before(async () => {
    assert.equal(absent, null, `CI must have a WebGPU adapter: ${absent}`);
    gpu = await Engine.open(undefined, { device: 'webgpu', readChars: null });
    cpu = await Engine.open(undefined, { device: 'cpu', precision: 'fp32', readChars: null });
    // 20 docbank lines spread through the set; without the evaluation folder, the sample page's lines.
    if (existsSync(EVAL_DIR)) {
      const all = loadLineSet(EVAL_DIR, 'docbank_lines');
      const picked = Array.from({ length: 20 }, (_, i) => all[Math.floor((i * all.length) / 20)]);
      lines = await Promise.all(
        picked.map(async (l) => cropLineImage(await decodeImage(readFileSync(l.image), l.image), modelSpec(cpu))),
      );
    } else {
      const { goldenCrops } = await import('../src/engine/bundle/warm-up.js');
      lines = goldenCrops(cpu.bundle);
    }
  });
  after(async () => {
    await gpu?.close();
    await cpu?.close();
  });

  it('opens on webgpu with the float vision graph, wide batches, and says it was asked for', () => {
    assert.equal(gpu.bundle.device, 'webgpu');
    assert.equal(gpu.bundle.precision, 'fp32');
    assert.equal(gpu.bundle.deviceReason, 'asked for');
    assert.equal(gpu.maxBatch, 32);
  });

  it('reads 20 docbank lines with the same text as the CPU, by the default decoding and by plain AR', async () => {
    assert.ok(lines.length >= 8);
    for (const decoding of [undefined, { drafter: 'none', verifier: 'greedy' }] as const) {
      const want = (await cpu.readLines(lines, { decoding })).lines.map((l) => l.text);
      const got = (await gpu.readLines(lines, { decoding })).lines.map((l) => l.text);
      assert.deepEqual(got, want);
      assert.ok(got.filter((t) => t.length > 3).length >= lines.length / 2, 'the lines were really read');
    }
  });

  it(
    "gives each lossless drafter and verifier pairing the verifier's text " + "(plain greedy AR's), on the GPU",
    async () => {
      const few = lines.slice(0, 3);
      const greedy = (await gpu.readLines(few, { decoding: { drafter: 'none', verifier: 'greedy' } })).lines.map(
        (l) => l.text,
      );
      const pairings: DecodingOptionsInput[] = [];
      for (const drafter of ['ctc', 'ngram', 'mtp', 'pmtp', 'diffusion', 'dual-diffusion'] as const) {
        for (const verifier of ['greedy', 'tree'] as const) pairings.push({ drafter, verifier, draftLength: 8 });
      }
      pairings.push(
        { drafter: 'reference', verifier: 'greedy', reference: greedy.join('\n') },
        { drafter: 'none', verifier: 'tree' },
      );
      for (const decoding of pairings) {
        const r = await gpu.readLines(few, { decoding });
        assert.deepEqual(
          r.lines.map((l) => l.text),
          greedy,
          `${decoding.drafter} + ${decoding.verifier}`,
        );
        if (decoding.drafter !== 'none') assert.ok(r.metrics.draftTokens > 0, `${decoding.drafter} drafted`);
      }
    },
  );

  it('holds the bundle to its golden outputs on webgpu (specula check-bundle --device webgpu)', async () => {
    const r = await specula({}, 'check-bundle', '--device', 'webgpu');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /ok {2}webgpu fp32 greedy texts/);
    assert.doesNotMatch(r.stdout, /int8/, "the int8 graph is the CPU's");
  });

  it("`specula parse --device webgpu` prints the sample page's markdown as `--device cpu` does", async () => {
    const [g, c] = [
      await specula({}, 'parse', '--device', 'webgpu', SAMPLE_PAGE),
      await specula({}, 'parse', '--device', 'cpu', SAMPLE_PAGE),
    ];
    assert.equal(g.code, 0, g.stderr);
    assert.equal(c.code, 0, c.stderr);
    assert.ok(c.stdout.length > 200);
    assert.equal(g.stdout, c.stdout);
  });

  it('refuses the int8 vision graph on a GPU by its typed error', async () => {
    await assert.rejects(
      loadBundle(DEFAULT_BUNDLE, { device: 'webgpu', precision: 'int8' }),
      (e) => e instanceof EngineError && e.code === 'INVALID_PRECISION' && /webgpu/.test(e.message),
    );
  });
});

describe('a device asked for and absent', () => {
  it('webgpu with no Vulkan driver fails with DEVICE_UNAVAILABLE, from the engine and from the CLI', async () => {
    const r = await specula(
      { VK_DRIVER_FILES: '/nonexistent/icd.json', VK_ICD_FILENAMES: '' },
      'parse',
      '--device',
      'webgpu',
      SAMPLE_PAGE,
    );
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /webgpu was requested but is not available: .*adapter/);
    const bundleModule = JSON.stringify(join(ROOT, 'dist', 'src', 'engine', 'bundle', 'bundle.js'));
    const code = `import { loadBundle } from ${bundleModule};
      try { await loadBundle(undefined, { device: 'webgpu' }); console.log('opened'); }
      catch (e) { console.log(e.code); }`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], {
      env: { ...process.env, VK_DRIVER_FILES: '/nonexistent/icd.json' },
    });
    assert.equal(stdout.trim().split('\n').at(-1), 'DEVICE_UNAVAILABLE');
  });

  it('auto never takes a software Vulkan device, and says why it took the CPU', async () => {
    const software = vulkanDrivers().filter((d) => d.software);
    const choices = autoCandidates();
    assert.equal(choices.at(-1)?.device, 'cpu');
    if (!existsSync('/dev/dri') && !readdirOrEmpty('/dev').some((f) => /^nvidia\d+$/.test(f))) {
      assert.deepEqual(
        choices.map((c) => c.device),
        ['cpu'],
      );
      assert.match(choices[0].reason, /no GPU device node/);
    }
    if (software.length) {
      const bundle = await loadBundle(DEFAULT_BUNDLE, { device: 'auto' });
      try {
        assert.notEqual(bundle.device, 'webgpu', 'lavapipe is the CPU again');
        assert.match(bundle.deviceReason, /^auto: /);
      } finally {
        await closeBundle(bundle);
      }
    }
  });
});

function readdirOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
