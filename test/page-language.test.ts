import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageLanguage } from '../src/document/page-language.js';

const lines = (...texts: string[]) => texts.map((text) => ({ text }));

describe("a page's scripts and language", () => {
  it('names the language of a page of Polish, Russian or Greek prose, and its script', () => {
    const polish = lines(
      'Wszyscy ludzie rodzą się wolni i równi pod względem swej godności i swych praw.',
      'Są oni obdarzeni rozumem i sumieniem i powinni postępować wobec innych w duchu braterstwa.',
    );
    const russian = lines(
      'Все люди рождаются свободными и равными в своем достоинстве и правах.',
      'Они наделены разумом и совестью и должны поступать в отношении друг друга в духе братства.',
    );
    const greek = lines(
      'Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα.',
      'Είναι προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους με πνεύμα αδελφοσύνης.',
    );
    assert.deepEqual(
      [polish, russian, greek].map((p) => pageLanguage(p, null)),
      [
        { scripts: [{ script: 'Latin', share: 1 }], language: 'pol' },
        { scripts: [{ script: 'Cyrillic', share: 1 }], language: 'rus' },
        { scripts: [{ script: 'Greek', share: 1 }], language: 'ell' },
      ],
    );
  });

  it('says nothing of the language where too little was read to tell', () => {
    assert.equal(pageLanguage(lines('Zażółć gęślą jaźń'), null).language, null);
    assert.deepEqual(pageLanguage([], null), { scripts: [], language: null });
  });

  it("counts lines the model could not read under the script gate's name for them", () => {
    const page = [
      { text: 'Page 2 of 10' },
      { text: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', unread: true },
    ];
    const { scripts } = pageLanguage(page, 'hangul');
    assert.deepEqual(
      scripts.map((s) => s.script),
      ['Hangul', 'Latin'],
    );
  });
});
