/**
 * The reading options of a job or a `specula parse`, declared once: each one's kind, default and words. The GraphQL
 * input (schema/parse-job.ts), the CLI's flags and help (cli/reading-flags.ts), a job's stored input
 * (jobs/job-record.ts) and readDocument's options are all derived from this table, and resolved by
 * `resolveReading` alone. How lines are decoded is declared by the engine's strategy registry instead
 * (engine/strategies/options.ts). This module imports nothing of Specula's, so every room may use it.
 */
import * as z from 'zod';

/** The whole-document renderings a job can keep: each one's GraphQL name and what it is. */
export const OUTPUT_FORMATS = {
  markdown: { api: 'MARKDOWN', description: 'Markdown: headings, lists, tables, pages separated by a rule.' },
  text: { api: 'TEXT', description: 'Plain text: every line, blocks separated by blank lines.' },
  json: { api: 'JSON', description: 'The block tree as JSON (ParseJob.document).' },
  hocr: {
    api: 'HOCR',
    description: 'hOCR 1.2 (XHTML): pages, areas, paragraphs, lines and words with boxes and x_wconf.',
  },
  alto: {
    api: 'ALTO',
    description: 'ALTO 4 XML: Page, PrintSpace, TextBlock, TextLine, String with positions and WC.',
  },
  tsv: { api: 'TSV', description: "Tesseract's TSV columns: one row per page, block, paragraph, line and word." },
  pdf: {
    api: 'SEARCHABLE_PDF',
    description:
      'A PDF of the pages with an invisible text layer word by word; downloaded from ParseJob.searchablePdf.url.',
  },
} as const;
export type OutputFormat = keyof typeof OUTPUT_FORMATS;
const FORMAT_NAMES = Object.keys(OUTPUT_FORMATS) as [OutputFormat, ...OutputFormat[]];
/** The renderings a job keeps when it names none. */
export const DEFAULT_FORMATS: readonly OutputFormat[] = ['markdown', 'text', 'json'];
/** The renderings that need word boxes (an alignment per line): asking for one turns `words` on. */
export const WORD_LEVEL_FORMATS = ['hocr', 'alto', 'tsv', 'pdf'] as const satisfies readonly OutputFormat[];

/** A switch: on the CLI `--flag` when it is off by default, `--no-flag` when it is on. */
interface Switch {
  kind: 'switch';
  default: boolean;
  flag: string;
  /** What the CLI flag does (for a switch on by default, what `--no-flag` does). */
  help: string;
  description: string;
  /** Its GraphQL name, where it differs from the key. */
  api?: string;
}
interface Text {
  kind: 'text';
  maxLength: number;
  flag: string;
  help: string;
  description: string;
}
/** The renderings to keep: a list in the API; the CLI prints one, chosen by its own --format. */
interface Formats {
  kind: 'formats';
  description: string;
}
type OptionSpec = Switch | Text | Formats;

export const READING_OPTIONS = {
  pages: {
    kind: 'text',
    maxLength: 1000,
    flag: 'pages 0,2-4',
    help: 'PDFs and multi-page TIFFs: 0-based pages, ranges inclusive',
    description: 'Pages to read, 0-based: "0,2-4". All pages when absent.',
  },
  formats: { kind: 'formats', description: 'Whole-document renderings to keep; MARKDOWN, TEXT and JSON when absent.' },
  words: {
    kind: 'switch',
    default: false,
    flag: 'words',
    help: "JSON: each line's words with their boxes and confidences",
    description: 'Word boxes and confidences on every line (Line.words); the word-level formats imply it.',
  },
  chars: {
    kind: 'switch',
    default: false,
    flag: 'chars',
    api: 'characters',
    help: "each word's characters too (JSON words[].chars, hOCR ocrx_cinfo, ALTO Glyph)",
    description: 'Character boxes within each word too (Word.characters, hOCR ocrx_cinfo, ALTO Glyph); implies words.',
  },
  dropHeadersFooters: {
    kind: 'switch',
    default: false,
    flag: 'drop-headers',
    help: 'leave page headers, footers and page numbers out of the markdown',
    description: 'Leave running headers, footers and page numbers out of the markdown.',
  },
  scriptGate: {
    kind: 'switch',
    default: true,
    flag: 'script-gate',
    help:
      "decode every line, even on a page in a script the model never learnt (by default such a page's flagged " +
      "lines are its CTC head's reading, marked unread)",
    description:
      'On a page in a script the model never learnt (Hangul, Han, Cyrillic, ...), read the lines it flags ' +
      'by the CTC head alone, marked Line.unread, instead of decoding Latin garbage to the length cap (default ' +
      'true; false decodes every line).',
  },
  textLayer: {
    kind: 'switch',
    default: true,
    flag: 'text-layer',
    help: "read a PDF by the model alone (by default a line takes the PDF's own text where it fits the line as well)",
    description:
      'On a born-digital PDF page whose text layer agrees with what the model reads, a line takes the ' +
      "layer's text where the model's CTC head finds it fits the line at least as well as its own reading " +
      '(Line.textLayer). Default true; false reads by the model alone.',
  },
  formulas: {
    kind: 'switch',
    default: true,
    flag: 'formulas',
    help:
      'read formulas as text (by default a line that reads like mathematics is read again by the formula bundle: ' +
      'LaTeX, $$ in the markdown, $ in table cells; and a run of symbols within a line of text, $ in the line)',
    description:
      'Read formulas as LaTeX with the formula bundle: display formulas (formula blocks, `$$` in the ' +
      'markdown, `$` in table cells) and formulas set within lines of text (`$` in the line; Line.inlineFormulas). ' +
      'Default true; false reads them as text.',
  },
} as const satisfies Record<string, OptionSpec>;

export type ReadingOptionName = keyof typeof READING_OPTIONS;

/** An option's check: a switch defaults as declared; blank text is no text. */
function check(spec: OptionSpec): z.ZodType {
  if (spec.kind === 'switch') return z.boolean().default(spec.default);
  if (spec.kind === 'text') {
    return z
      .string()
      .max(spec.maxLength)
      .transform((s) => s.trim() || undefined)
      .optional();
  }
  return z
    .array(z.enum(FORMAT_NAMES))
    .transform((f) => (f.length ? [...new Set(f)] : undefined))
    .optional();
}

const schema = z.object(Object.fromEntries(Object.entries(READING_OPTIONS).map(([k, spec]) => [k, check(spec)])));

type ValueOf<S> = S extends Switch
  ? boolean
  : S extends Text
    ? string | undefined
    : readonly OutputFormat[] | undefined;
/** Reading options with every choice made (text and formats absent: every page, DEFAULT_FORMATS). */
export type ReadingOptions = { readonly [K in ReadingOptionName]: ValueOf<(typeof READING_OPTIONS)[K]> };
/** Reading options as a caller sends them: any may be left out. */
export type ReadingOptionsInput = { readonly [K in keyof ReadingOptions]?: ReadingOptions[K] | null };

export class ReadingOptionsError extends Error {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Defaults filled in, nulls read as absent, and what implies what: characters imply words, and so does asking
 * for a word-level rendering. Throws ReadingOptionsError naming the option at fault.
 */
export function resolveReading(input: ReadingOptionsInput = {}): ReadingOptions {
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
  const parsed = schema.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const option = String(issue.path[0] ?? 'options');
    throw new ReadingOptionsError(option, `${option}: ${issue.message}`);
  }
  const o = parsed.data as unknown as ReadingOptions;
  const wordLevel = (o.formats ?? DEFAULT_FORMATS).some((f) =>
    (WORD_LEVEL_FORMATS as readonly OutputFormat[]).includes(f),
  );
  return { ...o, words: o.words || o.chars || wordLevel };
}

/** The renderings a resolved job keeps. */
export const formatsOf = (o: Pick<ReadingOptions, 'formats'>): ReadonlySet<OutputFormat> =>
  new Set(o.formats ?? DEFAULT_FORMATS);
