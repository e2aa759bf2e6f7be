/** `specula check-bundle DIR`: onnxruntime's outputs against the bundle's golden.json, for every precision it ships. */
import { parseArgs } from 'node:util';
import {
  bundlePrecisions,
  closeBundle,
  DEFAULT_BUNDLE,
  loadBundle,
  readBundleConfig,
} from '../engine/bundle/bundle.js';
import { isGpu, parseDeviceChoice } from '../engine/bundle/device.js';
import { checkGolden } from '../engine/bundle/golden.js';

export async function checkBundleCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { device: { type: 'string', default: 'cpu' } },
  });
  const dir = positionals[0] ?? DEFAULT_BUNDLE;
  const device = parseDeviceChoice(values.device, '--device');
  if (device === 'auto') throw new Error('--device auto: name the device to check (cpu, webgpu or cuda)');
  // The int8 vision graph is the CPU's: a GPU checks the float graphs.
  const precisions = bundlePrecisions(readBundleConfig(dir)).filter((p) => !isGpu(device) || p === 'fp32');
  for (const precision of precisions) {
    const bundle = await loadBundle(dir, { precision, device });
    try {
      const report = await checkGolden(bundle);
      for (const c of report.checks)
        console.log(`ok  ${device} ${precision} ${c.name.padEnd(20)} max |diff| ${c.maxAbsDiff.toExponential(2)}`);
      console.log(`ok  ${device} ${precision} greedy texts        ${JSON.stringify(report.texts)}`);
    } finally {
      await closeBundle(bundle);
    }
  }
  return 0;
}
