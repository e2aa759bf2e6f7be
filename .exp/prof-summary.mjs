import fs from 'node:fs';
for (const f of fs.readdirSync(process.argv[2])) {
  const p = JSON.parse(fs.readFileSync(process.argv[2] + '/' + f, 'utf8'));
  const byId = new Map(p.nodes.map(n => [n.id, n]));
  const self = new Map();
  const dt = p.timeDeltas; let total = 0;
  p.samples.forEach((id, i) => { const n = byId.get(id); const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(key, (self.get(key) ?? 0) + dt[i]); total += dt[i]; });
  console.log('==', f, 'total ms', (total / 1000).toFixed(0));
  [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25).forEach(([k, v]) => console.log((v / 1000).toFixed(0).padStart(7), k));
}
