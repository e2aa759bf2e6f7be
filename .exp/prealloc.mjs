import * as ort from 'onnxruntime-node';
const s = await ort.InferenceSession.create('../models/specula-line-base/vision.int8.onnx', { intraOpNumThreads: 1 });
const B = 4, H = 32, W = 400, V = W / 4;
const px = new Float32Array(B * H * W).map(() => (Math.random() < 0.2 ? 1 : 0));
const feeds = { pixels: new ort.Tensor('float32', px, [B, 1, H, W]), widths: new ort.Tensor('int64', new BigInt64Array(B).fill(BigInt(W)), [B]) };
const a = await s.run(feeds);
const big = new Float32Array(10 + 4 * B * 4 * V * 48);
const k = new ort.Tensor('float32', big.subarray(10, 10 + 4 * B * 4 * V * 48), [4, B, 4, V, 48]);
const b = await s.run(feeds, { vis_k: k, vis_v: null, ctc_logits: null, vis_mask: null });
let same = true; for (let i = 0; i < a.vis_k.data.length; i++) if (a.vis_k.data[i] !== big[10 + i]) { same = false; break; }
console.log('written in place:', same, 'returned same buffer:', b.vis_k.data.buffer === big.buffer, b.vis_k.data.byteOffset);
