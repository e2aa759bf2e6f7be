/** `specula check-bundle DIR`: onnxruntime's outputs against the bundle's golden.json. */
import { closeBundle, DEFAULT_BUNDLE, loadBundle } from '../engine/bundle.js';
import { checkGolden } from '../engine/golden.js';

export async function checkBundleCommand(args: string[]): Promise<number> {
  const dir = args[0] ?? DEFAULT_BUNDLE;
  const bundle = await loadBundle(dir);
  try {
    const report = await checkGolden(bundle);
    for (const c of report.checks) console.log(`ok  ${c.name.padEnd(20)} max |diff| ${c.maxAbsDiff.toExponential(2)}`);
    console.log(`ok  greedy texts        ${JSON.stringify(report.texts)}`);
    return 0;
  } finally {
    await closeBundle(bundle);
  }
}
