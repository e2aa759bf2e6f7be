import * as ort from 'onnxruntime-node';
import fs from 'node:fs';
const file = process.argv[2] ?? '../models/specula-line-base/decoder.onnx';
const threads = Number(process.argv[3] ?? 1);
const B = Number(process.argv[4] ?? 32), T = Number(process.argv[5] ?? 18), C = 96, V = 280, L = 4, H = 4, dh = 48;
const s = await ort.InferenceSession.create(file, { graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1, enableProfiling: true, profileFilePrefix: '/tmp/decprof' });
const rnd = (n) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = Math.random() - 0.5; return a; };
const tok = new BigInt64Array(B * T).fill(10n), pos = BigInt64Array.from({ length: B * T }, (_, i) => BigInt(40 + (i % T)));
const bias = new Float32Array(B * T * (C + T)); for (let r = 0; r < B * T; r++) for (let j = 50; j < C; j++) bias[r * (C + T) + j] = -1e9;
const feeds = { tokens: new ort.Tensor('int64', tok, [B, T]), positions: new ort.Tensor('int64', pos, [B, T]),
  cache_k: new ort.Tensor('float32', rnd(L * B * H * C * dh), [L, B, H, C, dh]), cache_v: new ort.Tensor('float32', rnd(L * B * H * C * dh), [L, B, H, C, dh]),
  vis_k: new ort.Tensor('float32', rnd(L * B * H * V * dh), [L, B, H, V, dh]), vis_v: new ort.Tensor('float32', rnd(L * B * H * V * dh), [L, B, H, V, dh]),
  vis_mask: new ort.Tensor('float32', new Float32Array(B * V).fill(1), [B, V]), attn_bias: new ort.Tensor('float32', bias, [B, T, C + T]) };
for (let i = 0; i < 2; i++) await s.run(feeds);
const t0 = performance.now();
for (let i = 0; i < 10; i++) await s.run(feeds);
console.log('ms per forward', (performance.now() - t0) / 10);
await s.release(); const f = fs.readdirSync('/tmp').filter(x=>x.startsWith('decprof')).map(x=>'/tmp/'+x).sort().pop();
const ev = JSON.parse(fs.readFileSync(f, 'utf8'));
const byType = {}; const agg = {}; let tot = 0;
for (const e of ev) if (e.cat === 'Node' && e.name.endsWith('_kernel_time')) { byType[e.args.op_name] = (byType[e.args.op_name] ?? 0) + e.dur; const k = e.args.op_name + ' ' + e.name; agg[k] = (agg[k] ?? 0) + e.dur; tot += e.dur; }
console.log(Object.entries(byType).sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, v]) => `${k} ${(100 * v / tot).toFixed(1)}%`).join('\n'));
console.log(Object.entries(agg).sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `${k} ${(100 * v / tot).toFixed(1)}%`).join('\n'));
fs.unlinkSync(f);
