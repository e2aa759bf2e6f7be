/**
 * The playground in a real browser: Debian's chromium driven by playwright-core against the real server
 * (embedded mode). Upload a real page, see tokens arrive, the final markdown and the metrics; a corrupt file
 * shows its typed error; an API key typed in is kept. Screenshots go to test-artifacts/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { configFromEnv } from '../src/server/config.js';
import { type RunningServer, startServer } from '../src/server/start.js';
import { ROOT, SAMPLE_PAGE } from './helpers/fixtures.js';
import { pdfOfImages } from './helpers/pdfs.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test-artifacts');

describe(
  'the playground page, in chromium',
  { skip: existsSync(CHROMIUM) ? false : `no browser at ${CHROMIUM} (apt-get install chromium)` },
  () => {
    let server: RunningServer;
    let browser: Browser;
    let page: Page;
    let base: string;

    before(async () => {
      server = await startServer(
        configFromEnv({ PORT: '0', HOST: '127.0.0.1', SPECULA_ALLOW_ANONYMOUS: '1', LOG_LEVEL: 'silent' }),
      );
      base = `http://127.0.0.1:${server.port}`;
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
      page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      mkdirSync(ARTIFACTS, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    it(
      'uploads a real page, streams its tokens, then shows the markdown, the ' + 'metrics and the block boxes',
      async () => {
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        page.on('console', (m) => {
          if (m.type() === 'error') errors.push(m.text());
        });
        await page.goto(`${base}/`);
        await page.waitForSelector('select[name="drafter"] option[value="CTC"]', { state: 'attached' });
        // Run A is what the API does unasked (ctc + joint); B, once ticked, plain greedy AR to compare with.
        assert.equal(await page.inputValue('fieldset[data-run="a"] select[name="drafter"]'), 'CTC');
        assert.equal(await page.inputValue('fieldset[data-run="a"] select[name="verifier"]'), 'JOINT');
        assert.equal(await page.inputValue('fieldset[data-run="b"] select[name="drafter"]'), 'NONE');
        // Run B's checkbox sits on its legend's line, beside its words.
        const tick = await page.locator('fieldset[data-run="b"] legend input').boundingBox();
        const words = await page.locator('fieldset[data-run="b"] legend label').boundingBox();
        assert.ok(
          tick && words && Math.abs(tick.y + tick.height / 2 - (words.y + words.height / 2)) < 4,
          'checkbox and legend on one line',
        );
        writeFileSync(join(ARTIFACTS, 'playground-start.png'), await page.screenshot({ fullPage: true }));
        await page.setInputFiles('#file', SAMPLE_PAGE);
        await page.check('fieldset[data-run="b"] input[name="enabled"]');
        await page.click('#run');
        // Tokens show while the job is still running, not only at the end.
        await page.waitForFunction(
          () => document.querySelector('.run[data-state="running"] .stream .token') !== null,
          null,
          { timeout: 60_000, polling: 20 },
        );
        writeFileSync(join(ARTIFACTS, 'playground-running.png'), await page.screenshot({ fullPage: true }));
        await page.waitForFunction(
          () =>
            [...document.querySelectorAll('.run')].every(
              (r) => (r as HTMLElement).dataset.state === 'done' || (r as HTMLElement).dataset.state === 'failed',
            ),
          null,
          { timeout: 120_000 },
        );
        const runs = page.locator('.run');
        assert.equal(await runs.count(), 2, 'two strategies side by side');
        for (let i = 0; i < 2; i++) {
          const r = runs.nth(i);
          assert.equal(await r.getAttribute('data-state'), 'done', (await r.locator('.error').textContent()) ?? '');
          const tpf = Number(await r.locator('[data-m="tpf"]').textContent());
          assert.ok(tpf >= 1, `tokens per forward shown (${tpf})`);
          assert.ok((await r.locator('.markdown').innerText()).length > 100, 'the markdown is rendered');
          assert.ok((await r.locator('.page svg rect').count()) > 3, 'block boxes drawn over the page');
          // Side by side, the page is drawn at the run's width (not a thumbnail) and the markdown is not cut off.
          const run = await r.boundingBox();
          const drawn = await r.locator('.page').first().boundingBox();
          assert.ok(
            run && drawn && drawn.width > 0.8 * run.width,
            `page ${drawn?.width} px wide in a run ${run?.width} px wide`,
          );
          assert.equal(
            await r.locator('.markdown').evaluate((el) => el.scrollHeight <= el.clientHeight + 1),
            true,
            'the markdown shows whole',
          );
        }
        // Run A (the API's default) drafts with the CTC head: some tokens come from accepted drafts; AR drafts nothing.
        assert.ok((await runs.nth(0).locator('.stream .token.draft').count()) > 0);
        assert.equal(await runs.nth(1).locator('.stream .token.draft').count(), 0, 'plain decoding drafts nothing');
        // What the page shows is the API's markdown for the job.
        const id = await runs.nth(0).getAttribute('data-job');
        const api = await fetch(`${base}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'query($id: ID!) { parseJob(id: $id) { markdown } }', variables: { id } }),
        });
        const md = ((await api.json()) as { data: { parseJob: { markdown: string } } }).data.parseJob.markdown;
        const firstWords = md
          .split(/\s+/)
          .filter((w) => /^[A-Za-z]{4,}$/.test(w))
          .slice(0, 5);
        const shown = await runs.nth(0).locator('.markdown').innerText();
        for (const w of firstWords) assert.ok(shown.includes(w), `"${w}" is shown`);
        writeFileSync(join(ARTIFACTS, 'playground.png'), await page.screenshot({ fullPage: true }));
        assert.deepEqual(errors, [], 'no script errors');
      },
    );

    it(
      'a PDF shows every page with its boxes; a page uploaded on its side is ' + 'drawn upright under its boxes',
      async () => {
        const png = readFileSync(SAMPLE_PAGE);
        const pdfFile = join(tmpdir(), 'two-pages.pdf');
        writeFileSync(pdfFile, pdfOfImages([png, png]));
        await page.goto(`${base}/`);
        await page.waitForSelector('select[name="drafter"] option[value="CTC"]', { state: 'attached' });
        await page.setInputFiles('#file', pdfFile);
        await page.click('#run');
        await page.waitForFunction(
          () => (document.querySelector('.run') as HTMLElement | null)?.dataset.state === 'done',
          null,
          { timeout: 120_000 },
        );
        assert.equal(await page.locator('.run .page').count(), 2, 'both pages, not page 0 only');
        for (let i = 0; i < 2; i++) assert.ok((await page.locator('.run .page').nth(i).locator('rect').count()) > 3);
        writeFileSync(join(ARTIFACTS, 'playground-pdf.png'), await page.screenshot({ fullPage: true }));
        const sharp = (await import('sharp')).default;
        const turned = join(tmpdir(), 'turned.png');
        await sharp(png).rotate(90).toFile(turned);
        await page.setInputFiles('#file', turned);
        await page.click('#run');
        await page.waitForFunction(
          () => (document.querySelector('.run') as HTMLElement | null)?.dataset.state === 'done',
          null,
          { timeout: 120_000 },
        );
        assert.match(await page.locator('.run .page figcaption').innerText(), /read turned 270/);
        assert.equal(await page.locator('.run .page canvas').count(), 1, 'the image, turned as it was read');
        writeFileSync(join(ARTIFACTS, 'playground-turned.png'), await page.screenshot({ fullPage: true }));
      },
    );

    it(
      "renders a table whose cells span as a table (the server's HTML, and " + 'only that HTML, passes through)',
      async () => {
        await page.goto(`${base}/`);
        await page.waitForSelector('select[name="drafter"] option[value="CTC"]', { state: 'attached' });
        await page.setInputFiles('#file', join(ROOT, 'test', 'fixtures', 'statement.png'));
        await page.click('#run');
        await page.waitForFunction(
          () => (document.querySelector('.run') as HTMLElement | null)?.dataset.state === 'done',
          null,
          { timeout: 120_000 },
        );
        const md = page.locator('.run .markdown');
        assert.equal(await md.locator('table').count(), 1, 'a table element, not its tags as text');
        assert.equal(await md.locator('th[colspan="3"]').count(), 1, 'the heading over the three dated columns');
        assert.doesNotMatch(await md.innerText(), /<t[dhr]/);
        writeFileSync(join(ARTIFACTS, 'playground-table.png'), await page.screenshot({ fullPage: true }));
      },
    );

    it("shows a corrupt file's typed error", async () => {
      const broken = join(tmpdir(), 'broken.png');
      const png = readFileSync(SAMPLE_PAGE);
      writeFileSync(broken, png.subarray(0, png.length >> 2));
      await page.goto(`${base}/playground/`);
      await page.waitForSelector('select[name="drafter"] option[value="CTC"]', { state: 'attached' });
      await page.setInputFiles('#file', broken);
      await page.click('#run');
      const error = page.locator('.run .error');
      await error.waitFor({ state: 'visible', timeout: 60_000 });
      assert.equal(await error.getAttribute('data-code'), 'CORRUPT_IMAGE');
      assert.match(await error.innerText(), /CORRUPT_IMAGE/);
      writeFileSync(join(ARTIFACTS, 'playground-error.png'), await page.screenshot({ fullPage: true }));
    });

    it(
      'a key typed into the page loads the choices at once and survives a reload; ' + 'Parse sends no empty drafter',
      async () => {
        const keyed = await startServer(
          configFromEnv({ PORT: '0', HOST: '127.0.0.1', SPECULA_API_KEYS: 'acme:k1', LOG_LEVEL: 'silent' }),
        );
        const context = await browser.newContext();
        try {
          const tab = await context.newPage();
          // The submissions are caught (and answered with an error) here: what matters is what the page sends.
          const sent: { drafter?: unknown; verifier?: unknown }[] = [];
          await tab.route('**/graphql', async (route) => {
            const body = route.request().postDataBuffer()?.toString('latin1') ?? '';
            const operations = /name="operations"\r\n\r\n(.*?)\r\n--/s.exec(body)?.[1];
            if (!operations) return route.continue();
            sent.push(
              (JSON.parse(operations) as { variables: { input: { decoding: object } } }).variables.input.decoding,
            );
            return route.fulfill({ json: { errors: [{ message: 'caught', extensions: { code: 'CAUGHT' } }] } });
          });
          await tab.goto(`http://127.0.0.1:${keyed.port}/`);
          await tab.locator('#choices', { hasText: 'UNAUTHENTICATED' }).waitFor();
          assert.equal(await tab.locator('select[name="drafter"] option').count(), 0, 'no choices without a key');
          await tab.setInputFiles('#file', SAMPLE_PAGE);
          await tab.click('#run');
          await tab.locator('.run .error[data-code="CAUGHT"]').waitFor();
          assert.deepEqual(sent, [{}], "no drafter or verifier named: the server's defaults apply");

          await tab.fill('#key', 'k1');
          await tab.waitForSelector('select[name="drafter"] option[value="CTC"]', { state: 'attached' });
          assert.equal(await tab.locator('#choices').innerText(), '', 'the refusal is gone once the key is in');
          await tab.reload();
          assert.equal(await tab.inputValue('#key'), 'k1', 'the key survives a reload');
          await tab.waitForSelector('select[name="drafter"] option[value="CTC"]', { state: 'attached' });
          assert.equal(await tab.locator('select[name="drafter"] option[value="CTC"]').count(), 2, 'no choice twice');
          await tab.setInputFiles('#file', SAMPLE_PAGE);
          await tab.click('#run');
          await tab.locator('.run .error[data-code="CAUGHT"]').waitFor();
          assert.deepEqual(sent[1], { drafter: 'CTC', verifier: 'JOINT' });
        } finally {
          await context.close();
          await keyed.close();
        }
      },
    );
  },
);
