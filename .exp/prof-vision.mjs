import * as ort from 'onnxruntime-node';
import fs from 'node:fs';
const file = process.argv[2] ?? '../models/specula-line-base/vision.int8.onnx';
const threads = Number(process.argv[3] ?? 1);
const s = await ort.InferenceSession.create(file, { graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1, enableProfiling: true, profileFilePrefix: '/tmp/visprof' });
const B = 16, H = 32, W = 800;
const px = new Float32Array(B * H * W);
for (let i = 0; i < px.length; i++) px[i] = Math.random() < 0.2 ? 1 : 0;
const feeds = { pixels: new ort.Tensor('float32', px, [B, 1, H, W]), widths: new ort.Tensor('int64', new BigInt64Array(B).fill(BigInt(W)), [B]) };
for (let i = 0; i < 2; i++) await s.run(feeds);
const t0 = performance.now();
for (let i = 0; i < 5; i++) await s.run(feeds);
console.log('ms per line', (performance.now() - t0) / 5 / B);
await s.endProfiling?.(); await s.release(); const f = fs.readdirSync('/tmp').filter(x=>x.startsWith('visprof')).map(x=>'/tmp/'+x).sort().pop();
const ev = JSON.parse(fs.readFileSync(f, 'utf8'));
const agg = {};
for (const e of ev) if (e.cat === 'Node' && e.name.endsWith('_kernel_time')) { const k = e.args.op_name + ' ' + e.name.replace('_kernel_time',''); agg[k] = (agg[k] ?? 0) + e.dur; }
const tot = Object.values(agg).reduce((a, b) => a + b, 0);
const byType = {};
for (const [k, v] of Object.entries(agg)) { const t = k.split(' ')[0]; byType[t] = (byType[t] ?? 0) + v; }
console.log(Object.entries(byType).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(100 * v / tot).toFixed(1)}%`).join('\n'));
console.log('---');
console.log(Object.entries(agg).sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${k} ${(100 * v / tot).toFixed(1)}%`).join('\n'));
fs.unlinkSync(f);
