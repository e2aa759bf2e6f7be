/**
 * Speculative decoding benchmark: every drafter/verifier pairing beside plain greedy AR (the baseline) and
 * tesseract, on the same real lines in the same run, at batch 1 and 32. Per row: tokens per forward, decode
 * time and its speedup over AR at the same batch, lines/s end to end, CER against the ground truth, and how
 * much the text differs from AR's (zero for lossless pairings; the relaxed verifier's cost shows here).
 *
 *   npm run bench:spec                        # docbank lines from ../shared/eval if present
 *   npm run bench:spec -- --lines 32 --no-tesseract
 *   npm run bench:spec -- --rounds 3           # every configuration 3 times, interleaved; times are medians
 *   npm run bench:spec -- --model /tmp/cand --only diffusion,dual --out /tmp/cand.json   # a candidate bundle's rows
 */
import { Engine } from '../src/engine/engine.js';
import type { DecodingOptionsInput } from '../src/engine/strategies/options.js';
import { corpusCer, tally } from '../src/eval/cer.js';
import { tesseractVersion } from '../src/eval/tesseract.js';
import { benchArgs, benchLines, median, reportHeader, tesseractLinesPerSecond, writeReport } from './lines.js';

interface Config {
  name: string;
  decoding: DecodingOptionsInput;
  lossless: boolean;
  /** What the drafter's paper reports, printed beside our measurement. */
  paper?: string;
}

async function main(): Promise<void> {
  const args = benchArgs(import.meta.url, 'bench/results/speculative.json', { only: { type: 'string' } });
  const engine = await Engine.open(args.model);
  const bl = await benchLines(engine, args.lines, args.evalDir);
  // What a PDF text layer would give: the lines' true text, as one document.
  const reference = bl.truth.join('\n');
  // --only diffusion,dual: rows whose name starts with one of these (the AR baseline is always the first row).
  const only = (args.extra.only ?? '').split(',').filter(Boolean);
  const configs: Config[] = (
    [
      { name: 'none + greedy (AR)', decoding: { drafter: 'none', verifier: 'greedy' }, lossless: true },
      {
        name: 'ctc + greedy, auto',
        decoding: { drafter: 'ctc', verifier: 'greedy', draftLength: 'auto' },
        lossless: true,
      },
      { name: 'ctc + greedy, 8', decoding: { drafter: 'ctc', verifier: 'greedy', draftLength: 8 }, lossless: true },
      { name: 'ctc + greedy, 16', decoding: { drafter: 'ctc', verifier: 'greedy', draftLength: 16 }, lossless: true },
      { name: 'ctc + tree, 8', decoding: { drafter: 'ctc', verifier: 'tree', draftLength: 8 }, lossless: true },
      {
        name: 'ngram + greedy, auto',
        decoding: { drafter: 'ngram', verifier: 'greedy', draftLength: 'auto' },
        lossless: true,
      },
      {
        name: 'reference + greedy, auto',
        decoding: { drafter: 'reference', verifier: 'greedy', draftLength: 'auto', reference },
        lossless: true,
      },
      { name: 'none + joint', decoding: { drafter: 'none', verifier: 'joint' }, lossless: false },
      {
        name: 'ctc + joint, auto (the default)',
        decoding: { drafter: 'ctc', verifier: 'joint', draftLength: 'auto' },
        lossless: false,
      },
      {
        name: 'ctc + relaxed (k=5, r=0.3), 8',
        decoding: { drafter: 'ctc', verifier: 'relaxed', draftLength: 8, relaxed: { topK: 5, minRatio: 0.3 } },
        lossless: false,
      },
      // The trained heads, where the bundle has them.
      ...(engine.bundle.mtp
        ? ([
            {
              name: 'mtp + greedy, 3',
              decoding: { drafter: 'mtp', verifier: 'greedy', draftLength: 3 },
              lossless: true,
              paper: 'FastMTP: about 2x decode',
            },
            {
              name: 'mtp + greedy, auto',
              decoding: { drafter: 'mtp', verifier: 'greedy', draftLength: 'auto' },
              lossless: true,
              paper: 'FastMTP: about 2x decode',
            },
            {
              name: 'mtp + greedy, 6',
              decoding: { drafter: 'mtp', verifier: 'greedy', draftLength: 6 },
              lossless: true,
              paper: 'FastMTP: about 2x decode',
            },
            {
              name: 'mtp + greedy, 12',
              decoding: { drafter: 'mtp', verifier: 'greedy', draftLength: 12 },
              lossless: true,
              paper: 'FastMTP: about 2x decode',
            },
            // pmtp runs the P-MTP head where the bundle has one (the gated MTP head where it does not).
            {
              name: `pmtp + greedy, 6 (gated${engine.bundle.pmtp ? '' : ', MTP head'})`,
              decoding: { drafter: 'pmtp', verifier: 'greedy', draftLength: 6 },
              lossless: true,
              paper: 'P-MTP: up to 5x',
            },
            {
              name: `pmtp + greedy, 12 (gated${engine.bundle.pmtp ? '' : ', MTP head'})`,
              decoding: { drafter: 'pmtp', verifier: 'greedy', draftLength: 12 },
              lossless: true,
              paper: 'P-MTP: up to 5x',
            },
            {
              name: `pmtp + greedy, auto (gated${engine.bundle.pmtp ? '' : ', MTP head'})`,
              decoding: { drafter: 'pmtp', verifier: 'greedy', draftLength: 'auto' },
              lossless: true,
              paper: 'P-MTP: up to 5x',
            },
            {
              name: 'routed + greedy, 6 (20% of visual tokens)',
              decoding: { drafter: 'routed', verifier: 'greedy', draftLength: 6 },
              lossless: true,
              paper: 'TIGER: longer accepted prefixes than unrouted',
            },
          ] satisfies Config[])
        : []),
      ...(engine.bundle.config.heads.diffusion
        ? ([
            {
              name: 'diffusion + greedy, 8',
              decoding: { drafter: 'diffusion', verifier: 'greedy', draftLength: 8 },
              lossless: true,
              paper: 'GravityOCR: 9.7 tokens/forward, 3.94x decode',
            },
            {
              name: 'diffusion + greedy, 12',
              decoding: { drafter: 'diffusion', verifier: 'greedy', draftLength: 12 },
              lossless: true,
              paper: 'GravityOCR: 9.7 tokens/forward, 3.94x decode',
            },
            {
              name: 'diffusion + greedy, auto',
              decoding: { drafter: 'diffusion', verifier: 'greedy', draftLength: 'auto' },
              lossless: true,
              paper: 'GravityOCR: 9.7 tokens/forward, 3.94x decode',
            },
            {
              name: 'dual-diffusion + tree, 8',
              decoding: { drafter: 'dual-diffusion', verifier: 'tree', draftLength: 8 },
              lossless: true,
              paper: 'D2SD: above single-draft diffusion',
            },
            {
              name: 'dual-diffusion + tree, 12',
              decoding: { drafter: 'dual-diffusion', verifier: 'tree', draftLength: 12 },
              lossless: true,
              paper: 'D2SD: above single-draft diffusion',
            },
          ] satisfies Config[])
        : []),
    ] satisfies Config[]
  ).filter((c, i) => i === 0 || !only.length || only.some((o) => c.name.startsWith(o)));
  const batches = args.batches;
  const rows: Record<string, number | string | boolean>[] = [];
  for (const batch of batches) {
    engine.maxBatch = batch;
    // Rounds run every configuration once each, so a slow moment of the machine lands on one sample of several
    // configurations, not on all samples of one. Counts (tokens, forwards) are the first round's.
    const runs = configs.map(() => ({ decodeMs: [] as number[], draftMs: [] as number[], seconds: [] as number[] }));
    const first: Awaited<ReturnType<Engine['readLines']>>[] = [];
    for (let round = 0; round < args.rounds; round++) {
      for (const [i, c] of configs.entries()) {
        const t0 = performance.now();
        const result = await engine.readLines(bl.crops, { decoding: c.decoding });
        runs[i].seconds.push((performance.now() - t0) / 1000);
        runs[i].decodeMs.push(result.metrics.decodeMs);
        runs[i].draftMs.push(result.metrics.draftMs);
        if (round === 0) first.push(result);
        process.stderr.write(`batch ${batch}, round ${round + 1}/${args.rounds}: ${c.name} done\n`);
      }
    }
    const arTexts = first[0].lines.map((l) => l.text);
    const arDecodeMs = median(runs[0].decodeMs);
    for (const [i, c] of configs.entries()) {
      const { lines, metrics } = first[i];
      const texts = lines.map((l) => l.text);
      const decodeMs = median(runs[i].decodeMs);
      rows.push({
        config: c.name,
        lossless: c.lossless,
        paper: c.paper ?? '',
        batch,
        lines: bl.crops.length,
        tokensPerForward: metrics.meanAcceptanceLength,
        forwards: metrics.forwards,
        drafts: metrics.drafts,
        draftTokens: metrics.draftTokens,
        acceptedTokens: metrics.acceptedTokens,
        acceptanceByPosition: metrics.acceptanceByPosition
          .slice(0, 8)
          .map((x) => Number(x.toFixed(3)))
          .join(' '),
        decodeMs,
        draftMs: median(runs[i].draftMs),
        decodeSpeedup: arDecodeMs / decodeMs,
        linesPerSecond: bl.crops.length / median(runs[i].seconds),
        rounds: args.rounds,
        cer: corpusCer(texts.map((t, j) => tally(t, bl.truth[j]))),
        changedVsAr: corpusCer(texts.map((t, j) => tally(t, arTexts[j]))),
      });
    }
  }
  const tess = args.tesseract ? await tesseractVersion() : null;
  let tessRow: Record<string, number | string> | null = null;
  if (tess) {
    const { seconds, texts } = await tesseractLinesPerSecond(bl.files);
    tessRow = {
      system: tess,
      linesPerSecond: bl.files.length / seconds,
      cer: corpusCer(texts.map((t, i) => tally(t, bl.truth[i]))),
    };
  }
  await engine.close();
  const report = {
    ...reportHeader(engine),
    lines: bl.source,
    notes:
      'tokensPerForward counts the bonus token (AR = 1.0); decodeSpeedup is ' +
      'decode time (decoder forwards plus drafting: draftMs) of AR / this ' +
      'config at the same batch; times (decodeMs, draftMs, linesPerSecond) ' +
      'are medians over rounds, counts are from the first round; changedVsAr ' +
      'is CER of this output against AR output (0 = byte-identical). ' +
      'Verification (for joint, its CTC prefix scoring) is outside decodeMs ' +
      'and inside lines/s.',
    rows,
    tesseract: tessRow,
  };
  writeReport(args.out, report);
  const pct = (x: unknown): string => `${(100 * Number(x)).toFixed(2)}%`;
  console.log(
    `lines: ${bl.source}; model ${engine.bundle.config.name} (step ${String(engine.bundle.config.training?.steps)})\n`,
  );
  console.log(
    '| config | batch | tokens/forward | decode speedup vs AR | drafting ' +
      'ms | lines/s | CER | text changed vs AR | acceptance by position | ' +
      'paper |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.config} | ${r.batch} | ${Number(r.tokensPerForward).toFixed(2)} ` +
        `| ${Number(r.decodeSpeedup).toFixed(2)}x | ` +
        `${Number(r.draftMs).toFixed(0)} | ` +
        `${Number(r.linesPerSecond).toFixed(2)} | ${pct(r.cer)} | ` +
        `${pct(r.changedVsAr)} | ${r.acceptanceByPosition} | ${String(r.paper)}` +
        ` |`,
    );
  }
  if (tessRow)
    console.log(
      `| ${tessRow.system} (--psm 7) | 1 | - | - | - | ` +
        `${Number(tessRow.linesPerSecond).toFixed(2)} | ${pct(tessRow.cer)} | ` +
        `- | - | - |`,
    );
  console.log(`\nwritten to ${args.out}`);
}

await main();
