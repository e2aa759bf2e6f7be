import * as ort from 'onnxruntime-node';
const B = Number(process.argv[2] ?? 32), T = Number(process.argv[3] ?? 18), C = 96, V = 280, L = 4, H = 4, dh = 48;
const opts = { graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1 };
let seed = 1; const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;
const rnd = (n) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = rand(); return a; };
const tok = BigInt64Array.from({ length: B * T }, (_, i) => BigInt(5 + (i % 90))), pos = BigInt64Array.from({ length: B * T }, (_, i) => BigInt(40 + (i % T)));
const bias = new Float32Array(B * T * (C + T)); for (let r = 0; r < B * T; r++) { for (let j = 50; j < C; j++) bias[r * (C + T) + j] = -1e9; for (let j = 0; j < T; j++) if (j > r % T) bias[r * (C + T) + C + j] = -1e9; }
const ck = rnd(L * B * H * C * dh), cv = rnd(L * B * H * C * dh), vk = rnd(L * B * H * V * dh), vv = rnd(L * B * H * V * dh);
const mask = new Float32Array(B * V).fill(1); for (let b = 0; b < B; b++) for (let v = 200 + b; v < V; v++) mask[b * V + v] = 0;
const common = { tokens: new ort.Tensor('int64', tok, [B, T]), positions: new ort.Tensor('int64', pos, [B, T]), vis_mask: new ort.Tensor('float32', mask, [B, V]), attn_bias: new ort.Tensor('float32', bias, [B, T, C + T]) };
const whole = { ...common, cache_k: new ort.Tensor('float32', ck, [L, B, H, C, dh]), cache_v: new ort.Tensor('float32', cv, [L, B, H, C, dh]), vis_k: new ort.Tensor('float32', vk, [L, B, H, V, dh]), vis_v: new ort.Tensor('float32', vv, [L, B, H, V, dh]) };
const layered = { ...common };
for (let l = 0; l < L; l++) {
  const per = (n) => B * H * n * dh;
  layered[`cache_k_${l}`] = new ort.Tensor('float32', ck.subarray(l * per(C), (l + 1) * per(C)), [B, H, C, dh]);
  layered[`cache_v_${l}`] = new ort.Tensor('float32', cv.subarray(l * per(C), (l + 1) * per(C)), [B, H, C, dh]);
  layered[`vis_k_${l}`] = new ort.Tensor('float32', vk.subarray(l * per(V), (l + 1) * per(V)), [B, H, V, dh]);
  layered[`vis_v_${l}`] = new ort.Tensor('float32', vv.subarray(l * per(V), (l + 1) * per(V)), [B, H, V, dh]);
}
const graphs = [['orig', '../models/specula-line-base/decoder.onnx', whole], ['layers', '/tmp/dec-layers.onnx', layered], ['attn', '/tmp/dec-attn.onnx', layered]];
const outs = {};
const sessions = {};
for (const [name, f] of graphs) sessions[name] = await ort.InferenceSession.create(f, opts);
const times = Object.fromEntries(graphs.map(([n]) => [n, []]));
for (let rep = 0; rep < 8; rep++) for (const [name, , feeds] of graphs) {
  const t0 = performance.now(); const o = await sessions[name].run(feeds); times[name].push(performance.now() - t0); outs[name] = o;
}
for (const [name] of graphs) { const t = times[name].slice(2).sort((a, b) => a - b); console.log(name, 'median ms', t[t.length >> 1].toFixed(1)); }
for (const key of ['logits', 'hidden', 'new_k', 'vis_attn']) for (const name of ['layers', 'attn']) {
  const a = outs.orig[key].data, b = outs[name][key].data; let d = 0, same = 0;
  for (let i = 0; i < a.length; i++) { d = Math.max(d, Math.abs(a[i] - b[i])); if (a[i] === b[i]) same++; }
  console.log(key, name, 'max |diff|', d, 'identical share', (same / a.length).toFixed(4));
}
