/** `specula check-bundle DIR`: onnxruntime's outputs against the bundle's golden.json, for every precision it ships. */
import { bundlePrecisions, closeBundle, DEFAULT_BUNDLE, loadBundle, readBundleConfig } from '../engine/bundle.js';
import { checkGolden } from '../engine/golden.js';

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
