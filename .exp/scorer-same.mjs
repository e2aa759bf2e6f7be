import { CtcPrefixScorer as New } from '../dist/src/engine/ctc-prefix.js';
import { CtcPrefixScorer as Old } from '/tmp/ctc-prefix-old.mjs';
const T = 180, V = 222;
let bad = 0;
for (let trial = 0; trial < 20; trial++) {
  const logits = new Float32Array(T * V); for (let i = 0; i < logits.length; i++) logits[i] = Math.random() * 20 - 10;
  const a = new New(logits, T, V, 0), b = new Old(logits, T, V, 0);
  let sa = a.initial(), sb = b.initial();
  for (let c = 0; c < 60; c++) { const ch = 1 + Math.floor(Math.random() * 5); sa = a.extend(sa, ch); sb = b.extend(sb, ch); if (sa.score !== sb.score || a.end(sa) !== b.end(sb)) bad++; }
}
console.log('mismatches', bad);
