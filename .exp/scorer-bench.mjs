import { CtcPrefixScorer } from '../dist/src/engine/ctc-prefix.js';
const T = 250, V = 222, N = 300;
const logits = new Float32Array(T * V); for (let i = 0; i < logits.length; i++) logits[i] = Math.random() * 10 - 5;
let t0 = performance.now();
for (let i = 0; i < N; i++) new CtcPrefixScorer(logits, T, V, 0);
console.log('ctor ms/line', ((performance.now() - t0) / N).toFixed(3));
const s = new CtcPrefixScorer(logits, T, V, 0);
t0 = performance.now();
for (let i = 0; i < 20; i++) { let st = s.initial(); for (let c = 0; c < 80; c++) st = s.extend(st, 5 + (c % 60)); }
console.log('80 extends ms/line', ((performance.now() - t0) / 20).toFixed(3));
