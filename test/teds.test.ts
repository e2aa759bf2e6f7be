/** TEDS as PubTabNet's metric.py scores a table read as HTML against its truth. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tableTree, teds } from '../src/eval/teds.js';

const truth =
  '<table><thead><tr><td><b>Week</b></td><td>Load</td></tr></thead>' +
  '<tbody><tr><td>1</td><td>20</td></tr><tr><td>2</td><td colspan="1">25</td></tr></tbody></table>';

describe('TEDS, tree-edit-distance similarity of tables', () => {
  it('scores a table read exactly 1, inline markup and th against td making no difference', () => {
    const read =
      '<table><thead><tr><th>Week</th><th>Load</th></tr></thead>' +
      '<tbody><tr><td>1</td><td>20</td></tr><tr><td>2</td><td>25</td></tr></tbody></table>';
    assert.equal(teds(read, truth), 1);
  });
  it("charges a cell's text by its normalised edit distance, and nothing in TEDS-S", () => {
    const read = truth.replace('<td>20</td>', '<td>2O</td>');
    // Nodes below the table: thead, tbody, 3 tr, 6 td = 11; one cell's text is half wrong.
    assert.equal(teds(read, truth), 1 - 0.5 / 11);
    assert.equal(teds(read, truth, true), 1);
  });
  it('charges a missing row its nodes, and a span a rename', () => {
    const shorter = truth.replace('<tr><td>2</td><td colspan="1">25</td></tr>', '');
    assert.equal(teds(shorter, truth, true), 1 - 3 / 11);
    const spanned = truth.replace('<tr><td>1</td><td>20</td></tr>', '<tr><td colspan="2">1 20</td></tr>');
    // One cell renamed (its span differs), the other removed.
    assert.equal(teds(spanned, truth, true), 1 - 2 / 11);
  });
  it('scores no table at all 0, and finds the table within other markup', () => {
    assert.equal(teds('', truth), 0);
    assert.equal(teds('no table here', truth), 0);
    assert.equal(tableTree(`<p>Table 1</p>${truth}`)?.children.length, 2);
  });
});
