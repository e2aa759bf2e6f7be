/** `specula check-bundle DIR`: onnxruntime's outputs against the bundle's golden.json, for every precision it ships. */
import { type BundleConfig, closeBundle, DEFAULT_BUNDLE, loadBundle, type Precision, readBundleConfig } from '../engine/bundle.js';
import { checkGolden } from '../engine/golden.js';

/** The precisions a bundle ships graphs for. */
export function bundlePrecisions(config: BundleConfig): Precision[] {
  return config.files.visionInt8 && config.int8 ? ['fp32', 'int8'] : ['fp32'];
}

export async function checkBundleCommand(args: string[]): Promise<number> {
  const dir = args[0] ?? DEFAULT_BUNDLE;
  for (const precision of bundlePrecisions(readBundleConfig(dir))) {
    const bundle = await loadBundle(dir, { precision });
    try {
      const report = await checkGolden(bundle);
      for (const c of report.checks) console.log(`ok  ${precision} ${c.name.padEnd(20)} max |diff| ${c.maxAbsDiff.toExponential(2)}`);
      console.log(`ok  ${precision} greedy texts        ${JSON.stringify(report.texts)}`);
    } finally {
      await closeBundle(bundle);
    }
  }
  return 0;
}
