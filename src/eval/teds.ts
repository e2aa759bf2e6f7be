/**
 * TEDS, tree-edit-distance-based similarity (Zhong et al. 2020), as PubTabNet's metric.py and OmniDocBench score a
 * table read as HTML against its truth: both tables as trees of table, thead, tbody, tr and td (th counted as td),
 * the tree edit distance between them with a node inserted or removed at cost 1, and a node renamed at cost 1 where
 * the tags or a cell's colspan or rowspan differ, else, for two cells, the normalised edit distance of their text;
 * the similarity is one less that distance over the larger tree's count of nodes below its table. The structure-only
 * score (TEDS-S) leaves the cells' text out. Unlike metric.py, markup within a cell (`<b>`, `<sup>`) is read as its
 * text alone and counts no node, and a th is a td: a reading is scored on its cells, not on their typography.
 */
import editDistance from 'edit-distance';
import { distance } from 'fastest-levenshtein';
import { type DefaultTreeAdapterMap, parseFragment } from 'parse5';

type Node = DefaultTreeAdapterMap['node'];

export interface TableNode {
  tag: 'table' | 'thead' | 'tbody' | 'tr' | 'td';
  colspan: number;
  rowspan: number;
  /** A cell's text, whitespace folded; '' for the other nodes. */
  text: string;
  children: TableNode[];
}

const TAGS = new Set(['table', 'thead', 'tbody', 'tr', 'td', 'th']);

function textOf(node: Node): string {
  if (node.nodeName === '#text' && 'value' in node) return node.value;
  return 'childNodes' in node ? node.childNodes.map(textOf).join(' ') : '';
}

function span(node: Node, name: string): number {
  const v = 'attrs' in node ? Number.parseInt(node.attrs.find((a) => a.name === name)?.value ?? '', 10) : NaN;
  return Number.isFinite(v) && v > 0 ? v : 1;
}

/** The table nodes under `node`, other elements looked through (a caption, a colgroup, markup within a cell). */
function tableChildren(node: Node): TableNode[] {
  const out: TableNode[] = [];
  for (const child of 'childNodes' in node ? node.childNodes : []) {
    if (!('tagName' in child)) continue;
    if (!TAGS.has(child.tagName) || child.tagName === 'table') {
      out.push(...tableChildren(child));
      continue;
    }
    const cell = child.tagName === 'td' || child.tagName === 'th';
    out.push({
      tag: cell ? 'td' : (child.tagName as TableNode['tag']),
      colspan: cell ? span(child, 'colspan') : 1,
      rowspan: cell ? span(child, 'rowspan') : 1,
      text: cell ? textOf(child).replace(/\s+/g, ' ').trim() : '',
      children: cell ? [] : tableChildren(child),
    });
  }
  return out;
}

/** The first table of an HTML text as a tree; null where it holds none. */
export function tableTree(html: string): TableNode | null {
  const find = (node: Node): Node | null => {
    if ('tagName' in node && node.tagName === 'table') return node;
    for (const child of 'childNodes' in node ? node.childNodes : []) {
      const found = find(child);
      if (found) return found;
    }
    return null;
  };
  const table = find(parseFragment(html));
  return table ? { tag: 'table', colspan: 1, rowspan: 1, text: '', children: tableChildren(table) } : null;
}

const count = (n: TableNode): number => 1 + n.children.reduce((s, c) => s + count(c), 0);

/** TEDS of a table read (HTML) against its truth (HTML), 0 to 1; `structureOnly`: TEDS-S, cells' text left out. */
export function teds(predicted: string, truth: string, structureOnly = false): number {
  const a = tableTree(predicted);
  const b = tableTree(truth);
  if (!a || !b) return 0;
  const rename = (x: TableNode, y: TableNode): number => {
    if (x.tag !== y.tag || x.colspan !== y.colspan || x.rowspan !== y.rowspan) return 1;
    if (x.tag !== 'td' || structureOnly) return 0;
    const longer = Math.max(x.text.length, y.text.length);
    return longer ? distance(x.text, y.text) / longer : 0;
  };
  const one = (): number => 1;
  const d = editDistance.ted(a, b, (n: TableNode) => n.children, one, one, rename).distance;
  return 1 - d / Math.max(count(a) - 1, count(b) - 1, 1);
}
