import * as ort from 'onnxruntime-node';
const B = 32, T = 18, C = 96, V = 280, L = 4, H = 4, dh = 48;
const s = await ort.InferenceSession.create('../models/specula-line-base/decoder.onnx', { intraOpNumThreads: 1 });
const rnd = (n) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = Math.random() - 0.5; return a; };
const feeds = { tokens: new ort.Tensor('int64', new BigInt64Array(B * T).fill(7n), [B, T]), positions: new ort.Tensor('int64', BigInt64Array.from({ length: B * T }, (_, i) => BigInt(i % T)), [B, T]),
  vis_mask: new ort.Tensor('float32', new Float32Array(B * V).fill(1), [B, V]), attn_bias: new ort.Tensor('float32', new Float32Array(B * T * (C + T)), [B, T, C + T]) };
for (const n of ['cache_k', 'cache_v']) for (let l = 0; l < L; l++) feeds[`${n}_${l}`] = new ort.Tensor('float32', rnd(B * H * C * dh), [B, H, C, dh]);
for (const n of ['vis_k', 'vis_v']) for (let l = 0; l < L; l++) feeds[`${n}_${l}`] = new ort.Tensor('float32', rnd(B * H * V * dh), [B, H, V, dh]);
const t = { all: [], some: [] };
for (let i = 0; i < 12; i++) {
  let t0 = performance.now(); await s.run(feeds); t.all.push(performance.now() - t0);
  t0 = performance.now(); await s.run(feeds, ['logits', 'new_k', 'new_v']); t.some.push(performance.now() - t0);
}
for (const k in t) { const a = t[k].slice(2).sort((x, y) => x - y); console.log(k, a[a.length >> 1].toFixed(1)); }
