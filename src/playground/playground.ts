/**
 * The playground: one page over the public GraphQL API only. It uploads the document (multipart request), follows
 * the job's events over server-sent events, shows every token as it is committed (drafted or the verifier's),
 * live metrics computed from the token deltas, and when the job is done its markdown and the block boxes over
 * the page. Two strategies can run side by side on the same document.
 */
import { ApiError, follow, gql, storedKey, storeKey, upload } from './api.js';
import type { FinalMetrics, JobEvent, JobResult, Marked, Strategies, TokenDelta } from './types.js';

const $ = <T extends Element>(sel: string, root: ParentNode = document): T => root.querySelector(sel) as T;

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * src/document/table-text.ts's HTML table: table, thead, tbody, tr, th and td with colspan/rowspan, text without tags.
 */
const SERVER_CELL = String.raw`<(th|td)(?: colspan="\d+")?(?: rowspan="\d+")?>[^<>]*<\/\1>`;
const SERVER_TABLE = new RegExp(
  String.raw`^<table>\n(?:<\/?(?:thead|tbody)>\n|<tr>(?:${SERVER_CELL})*<\/tr>\n)*<\/table>\s*$`,
);

let markedReady: Promise<Marked> | null = null;
function markdownRenderer(): Promise<Marked> {
  markedReady ??= (import('/playground/vendor/marked.js' as string) as Promise<{ marked: Marked }>).then(
    ({ marked }) => {
      // Text read off a document is data, never markup: raw HTML in it is shown, not run. The one exception is the
      // HTML table the server writes for a table whose cells span, and only in exactly that shape (its cell text is
      // escaped server-side, so it holds no tags).
      marked.use({
        renderer: {
          html: (t: { text?: string } | string) => {
            const html = typeof t === 'string' ? t : (t.text ?? '');
            return SERVER_TABLE.test(html) ? html : escapeHtml(html);
          },
        },
      });
      return marked;
    },
  );
  return markedReady;
}

/** The uploaded image as the server read it: turned by the page's rotation, at the page's size. */
async function turnedImage(file: File, page: JobResult['pages'][number]): Promise<HTMLCanvasElement> {
  const img = new Image();
  img.src = URL.createObjectURL(file);
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = page.width;
  canvas.height = page.height;
  const g = canvas.getContext('2d') as CanvasRenderingContext2D;
  g.translate(page.width / 2, page.height / 2);
  g.rotate((page.rotation * Math.PI) / 180);
  g.drawImage(img, -img.naturalWidth / 2, -img.naturalHeight / 2);
  URL.revokeObjectURL(img.src);
  return canvas;
}

/** One run's panel: its stream, live metrics, and the result. */
class RunView {
  readonly el: HTMLElement;
  private readonly lines = new Map<string, HTMLElement>();
  private steps = 0;
  private tokens = 0;
  private fromDrafts = 0;
  private reached: number[] = [];
  private acceptedAt: number[] = [];
  private readonly started = performance.now();
  private timer: number;

  constructor(title: string) {
    const tpl = $<HTMLTemplateElement>('#run-template');
    this.el = (tpl.content.firstElementChild as HTMLElement).cloneNode(true) as HTMLElement;
    $<HTMLElement>('h2', this.el).textContent = title;
    $('#runs').append(this.el);
    this.timer = window.setInterval(
      () => this.metric('time', `${((performance.now() - this.started) / 1000).toFixed(1)} s`),
      200,
    );
  }

  status(state: string, text: string): void {
    this.el.dataset.state = state;
    $<HTMLElement>('.status', this.el).textContent = text;
  }

  fail(e: unknown): void {
    const err = e instanceof ApiError ? e : new ApiError('ERROR', String(e));
    const box = $<HTMLElement>('.error', this.el);
    box.hidden = false;
    box.dataset.code = err.code;
    box.textContent = `${err.code}: ${err.message}`;
    this.status('failed', 'failed');
    window.clearInterval(this.timer);
  }

  private metric(name: string, value: string): void {
    $<HTMLElement>(`[data-m="${name}"]`, this.el).textContent = value;
  }

  /** Acceptance by draft position, in percent, for the first eight positions; `none` when nothing was drafted. */
  private acceptance(percents: number[], none: string): void {
    const shown = percents.slice(0, 8).map((p) => `${p}%`);
    this.metric('acc', shown.join(' ') || none);
  }

  private lineEl(page: number, line: number): HTMLElement {
    const key = `${page}:${line}`;
    let el = this.lines.get(key);
    if (!el) {
      el = document.createElement('div');
      el.className = 'line';
      el.dataset.key = key;
      // Keep lines in reading order even though they decode side by side.
      const stream = $<HTMLElement>('.stream', this.el);
      const next = [...stream.children].find((c) => {
        const [p, l] = ((c as HTMLElement).dataset.key ?? '').split(':').map(Number);
        return p > page || (p === page && l > line);
      });
      stream.insertBefore(el, next ?? null);
      this.lines.set(key, el);
    }
    return el;
  }

  token(e: TokenDelta): void {
    const el = this.lineEl(e.page, e.line);
    [...e.text].forEach((ch, i) => {
      const span = document.createElement('span');
      span.className = `token ${e.fromDraft[i] ? 'draft' : 'verify'}`;
      span.textContent = ch;
      el.append(span);
    });
    this.steps++;
    this.tokens += e.fromDraft.length;
    this.fromDrafts += e.accepted;
    for (let i = 0; i < e.drafted; i++) {
      this.reached[i] = (this.reached[i] ?? 0) + 1;
      if (i < e.accepted) this.acceptedAt[i] = (this.acceptedAt[i] ?? 0) + 1;
    }
    this.metric('tpf', (this.tokens / this.steps).toFixed(2));
    this.metric('steps', String(this.steps));
    this.metric('tokens', `${this.tokens} (${this.fromDrafts} from drafts)`);
    const percents = this.reached.map((n, i) => Math.round((100 * (this.acceptedAt[i] ?? 0)) / n));
    this.acceptance(percents, '–');
  }

  restart(attempt: number): void {
    this.lines.clear();
    $<HTMLElement>('.stream', this.el).replaceChildren();
    this.steps = this.tokens = this.fromDrafts = 0;
    this.reached = [];
    this.acceptedAt = [];
    this.status('running', `read again from the start (attempt ${attempt})`);
  }

  async done(m: FinalMetrics, job: JobResult, file: File): Promise<void> {
    window.clearInterval(this.timer);
    this.metric('tpf', m.tokensPerForward.toFixed(2));
    this.metric('steps', `${m.sequenceForwards} (${m.forwards} batched forwards)`);
    const percents = m.acceptanceByPosition.map((a) => Math.round(a * 100));
    this.acceptance(percents, 'no drafts');
    this.metric(
      'tokens',
      `${m.committedTokens} (${m.acceptedTokens} from drafts), visual tokens ` +
        `attended ${Math.round(m.visualTokenRatio * 100)}%`,
    );
    const result = $<HTMLElement>('.result', this.el);
    result.hidden = false;
    const marked = await markdownRenderer();
    $<HTMLElement>('.markdown', this.el).innerHTML = marked.parse(job.markdown ?? '');
    // Every page with its block boxes: an image under them (turned as the server turned it to read it), a PDF
    // page as its outline (the browser has no PDF renderer here).
    const pages = $<HTMLElement>('.pages', this.el);
    pages.replaceChildren();
    const colors: Record<string, string> = {
      HEADING: '#c50',
      PARAGRAPH: '#27c',
      LIST_ITEM: '#2a7',
      TABLE: '#a3c',
      FIGURE: '#888',
      PAGE_HEADER: '#999',
      PAGE_FOOTER: '#999',
      PAGE_NUMBER: '#999',
    };
    const isImage = file.type.startsWith('image/') && !file.type.includes('tiff');
    for (const page of job.pages) {
      const holder = document.createElement('figure');
      holder.className = 'page';
      const boxes = page.blocks
        .map(
          (b) =>
            `<rect x="${b.box.x}" y="${b.box.y}" width="${b.box.width}" height="${b.box.height}" ` +
            `stroke="${colors[b.type] ?? '#27c'}"><title>${b.order}: ${b.type}</title></rect>`,
        )
        .join('');
      holder.innerHTML =
        `<svg class="boxes" viewBox="0 0 ${page.width} ${page.height}">${boxes}</svg>` +
        `<figcaption>page ${page.index}${page.rotation ? `, read turned ${page.rotation}°` : ''}</figcaption>`;
      holder.style.aspectRatio = `${page.width} / ${page.height}`;
      if (isImage) holder.prepend(await turnedImage(file, page));
      pages.append(holder);
    }
    this.status('done', `done: ${job.pages.length} page(s)`);
  }
}

async function run(file: File, fieldset: HTMLFieldSetElement, title: string): Promise<void> {
  const view = new RunView(title);
  const get = (name: string): string => (fieldset.querySelector(`[name="${name}"]`) as HTMLInputElement).value;
  // An empty choice (the engine's choices not loaded) is left out: the server's default applies.
  const decoding: Record<string, unknown> = {};
  for (const name of ['drafter', 'verifier']) if (get(name)) decoding[name] = get(name);
  if (get('draftLength')) decoding.draftLength = Number(get('draftLength'));
  const keep = Number(get('keep') || '1');
  if (keep < 1) decoding.visualTokens = { keep };
  try {
    view.status('queued', 'uploading');
    const id = await upload(file, decoding);
    view.el.dataset.job = id;
    view.status('running', 'reading');
    let final: JobEvent | null = null;
    await follow(id, (e) => {
      if (e.__typename === 'TokenDelta') view.token(e);
      else if (e.__typename === 'JobRestarted') view.restart(e.attempt);
      else if (e.__typename === 'JobDone' || e.__typename === 'JobFailed' || e.__typename === 'JobCancelled') final = e;
    });
    const end = final as JobEvent | null;
    if (end?.__typename === 'JobFailed') throw new ApiError(end.code, end.message);
    if (end?.__typename !== 'JobDone') throw new ApiError('STREAM_ENDED', 'the event stream ended before the job did');
    const { parseJob } = await gql<{ parseJob: JobResult }>(
      'query($id: ID!) { parseJob(id: $id) { status markdown error { code message } pages { index width height ' +
        'rotation blocks { type order box { x y width height } } } } }',
      { id },
    );
    await view.done(end.metrics, parseJob, file);
  } catch (e) {
    view.fail(e);
  }
}

/** Fill the drafter and verifier choices from the engine query; says why on the page when the API refuses. */
async function loadChoices(): Promise<void> {
  let strategies: Strategies;
  try {
    const { engine } = await gql<{ engine: { strategies: Strategies } }>(
      '{ engine { strategies { drafters { name description available reason ' +
        '} verifiers { name description } defaultDrafter defaultVerifier } } }',
    );
    strategies = engine.strategies;
  } catch (e) {
    const err = e instanceof ApiError ? e : new ApiError('ERROR', String(e));
    $<HTMLElement>('#choices').textContent = `The API refused: ${err.code}: ${err.message}. Enter an API key above.`;
    return;
  }
  $<HTMLElement>('#choices').textContent = '';
  for (const select of document.querySelectorAll<HTMLSelectElement>('select[name="drafter"]')) {
    select.replaceChildren();
    for (const d of strategies.drafters)
      select.add(
        Object.assign(new Option(d.name.toLowerCase(), d.name), {
          disabled: !d.available,
          title: d.reason ?? d.description,
        }),
      );
  }
  for (const select of document.querySelectorAll<HTMLSelectElement>('select[name="verifier"]')) {
    select.replaceChildren();
    for (const v of strategies.verifiers)
      select.add(Object.assign(new Option(v.name.toLowerCase(), v.name), { title: v.description }));
  }
  // A: what the API does for a request that names nothing. B, to compare with: plain greedy AR decoding.
  const a = $<HTMLFieldSetElement>('fieldset[data-run="a"]');
  $<HTMLSelectElement>('select[name="drafter"]', a).value = strategies.defaultDrafter;
  $<HTMLSelectElement>('select[name="verifier"]', a).value = strategies.defaultVerifier;
  const b = $<HTMLFieldSetElement>('fieldset[data-run="b"]');
  $<HTMLSelectElement>('select[name="drafter"]', b).value = 'NONE';
  $<HTMLSelectElement>('select[name="verifier"]', b).value = 'GREEDY';
}

/** The key is kept as it is typed, and the choices it opens load a moment after the typing stops. */
function watchKey(): void {
  const input = $<HTMLInputElement>('#key');
  input.value = storedKey();
  let timer = 0;
  input.addEventListener('input', () => {
    storeKey(input.value);
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void loadChoices(), 300);
  });
}

async function init(): Promise<void> {
  watchKey();
  const fileInput = $<HTMLInputElement>('#file');
  const drop = $<HTMLElement>('#drop');
  const runButton = $<HTMLButtonElement>('#run');
  let file: File | null = null;
  const choose = (f: File | undefined): void => {
    if (!f) return;
    file = f;
    $<HTMLElement>('#file-name').textContent = `${f.name} (${Math.round(f.size / 1024)} KB)`;
    runButton.disabled = false;
  };
  fileInput.addEventListener('change', () => choose(fileInput.files?.[0]));
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    choose(e.dataTransfer?.files[0]);
  });
  runButton.addEventListener('click', () => {
    if (!file) return;
    $('#runs').replaceChildren();
    const a = $<HTMLFieldSetElement>('fieldset[data-run="a"]');
    const b = $<HTMLFieldSetElement>('fieldset[data-run="b"]');
    const runs = [run(file, a, 'A')];
    if ((b.querySelector('[name="enabled"]') as HTMLInputElement).checked) runs.push(run(file, b, 'B'));
    void Promise.all(runs);
  });
  await loadChoices();
}

void init();
