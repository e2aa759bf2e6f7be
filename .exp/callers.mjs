import fs from 'node:fs';
const [dir, fname] = process.argv.slice(2);
for (const f of fs.readdirSync(dir)) {
  const p = JSON.parse(fs.readFileSync(dir + '/' + f, 'utf8'));
  const byId = new Map(p.nodes.map(n => [n.id, n]));
  const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfT = new Map(); p.samples.forEach((id, i) => selfT.set(id, (selfT.get(id) ?? 0) + p.timeDeltas[i]));
  // total time of each node = self + children
  const total = new Map();
  const tot = (id) => { if (total.has(id)) return total.get(id); const n = byId.get(id); let t = selfT.get(id) ?? 0; for (const c of n.children ?? []) t += tot(c); total.set(id, t); return t; };
  const agg = {};
  for (const n of p.nodes) if (n.callFrame.functionName === fname) { const par = byId.get(parent.get(n.id)); const k = par ? par.callFrame.functionName + ':' + par.callFrame.lineNumber : '?'; agg[k] = (agg[k] ?? 0) + tot(n.id); }
  console.log(Object.entries(agg).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${(v / 1000).toFixed(0)} ${k}`).join('\n'));
}
