import * as ort from 'onnxruntime-node';
const file = process.argv[2], threads = Number(process.argv[3] ?? 1);
const s = await ort.InferenceSession.create(file, { graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1, extra: { session: { intra_op: { allow_spinning: '0' } } } });
const W = 1100, H = 32;
for (const B of [1, 4, 8, 16, 32]) {
  const px = new Float32Array(B * H * W); for (let i = 0; i < px.length; i++) px[i] = Math.random() < 0.2 ? 1 : 0;
  const feeds = { pixels: new ort.Tensor('float32', px, [B, 1, H, W]), widths: new ort.Tensor('int64', new BigInt64Array(B).fill(BigInt(W)), [B]) };
  await s.run(feeds);
  const c0 = process.cpuUsage(); const t0 = performance.now(); const n = Math.max(2, Math.ceil(32 / B));
  for (let i = 0; i < n; i++) await s.run(feeds);
  const c = process.cpuUsage(c0);
  console.log(`B=${B} wall ms/line ${((performance.now() - t0) / n / B).toFixed(2)} cpu ms/line ${((c.user + c.system) / 1000 / n / B).toFixed(2)}`);
}
