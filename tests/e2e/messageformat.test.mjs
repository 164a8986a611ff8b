// The web client's message format (web/messageformat.js, the ICU
// MessageFormat subset of issue 36) and its catalogs (web/locales/*.json),
// in Node without a browser: arguments, numbers the locale's way, plural
// categories (Arabic's six), exact values, selects, `#`, nesting, the
// errors of a message that cannot be read; and every translation in every
// catalog readable, with the same arguments as its English source.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './harness.mjs';
import { MessageError, argumentNames, formatMessage, parseMessage } from '../../web/messageformat.js';

const say = (text, args, locale = 'en') => formatMessage(parseMessage(text), args, locale);
const MOVES = '{count, plural, =0 {no moves} one {# move} other {# moves}}';

describe('the message format', () => {
  test('text, arguments and numbers', () => {
    assert.equal(say('Your move.'), 'Your move.');
    assert.equal(say('Waiting for {name}…', { name: 'alice' }), 'Waiting for alice…');
    assert.equal(say('{n} watching', { n: 12345 }), '12,345 watching');
    assert.equal(say('{n} watching', { n: 12345 }, 'de'), '12.345 watching');
    assert.equal(say('{n, number} nodes', { n: 1500 }, 'fr').replace(/\s/g, ' '), '1 500 nodes');
    // Arabic's digits are the locale data's choice (Latin in recent CLDR).
    const ar = new Intl.NumberFormat('ar');
    assert.equal(say('{n}', { n: 42 }, 'ar'), ar.format(42));
    // Apostrophes are text; a missing argument shows its name.
    assert.equal(say("Don't {verb}", {}), "Don't {verb}");
  });

  test('plurals by the locale\u2019s categories, exact values first, # the number', () => {
    assert.equal(say(MOVES, { count: 0 }), 'no moves');
    assert.equal(say(MOVES, { count: 1 }), '1 move');
    assert.equal(say(MOVES, { count: 2 }), '2 moves');
    assert.equal(say(MOVES, { count: 1000 }), '1,000 moves');
    const ar = '{count, plural, zero {لا نقلات} one {نقلة واحدة} two {نقلتان} few {# نقلات} many {# نقلة} other {# نقلة}}';
    assert.equal(say(ar, { count: 0 }, 'ar'), 'لا نقلات');
    assert.equal(say(ar, { count: 1 }, 'ar'), 'نقلة واحدة');
    assert.equal(say(ar, { count: 2 }, 'ar'), 'نقلتان');
    const digits = new Intl.NumberFormat('ar');
    assert.equal(say(ar, { count: 3 }, 'ar'), `${digits.format(3)} نقلات`);
    assert.equal(say(ar, { count: 11 }, 'ar'), `${digits.format(11)} نقلة`);
    assert.equal(say(ar, { count: 100 }, 'ar'), `${digits.format(100)} نقلة`);
    // French says "1 coup" and "0 coup" (0 is `one` there).
    const fr = '{count, plural, one {# coup} other {# coups}}';
    assert.equal(say(fr, { count: 0 }, 'fr'), '0 coup');
    assert.equal(say(fr, { count: 2 }, 'fr'), '2 coups');
    assert.equal(say('{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}', { n: 22 }), '22nd');
  });

  test('selects, and a plural inside a select', () => {
    const text = '{side, select, white {White} black {Black} other {Someone}} has {n, plural, one {# minute} other {# minutes}} left';
    assert.equal(say(text, { side: 'white', n: 1 }), 'White has 1 minute left');
    assert.equal(say(text, { side: 'green', n: 3 }), 'Someone has 3 minutes left');
    assert.deepEqual([...argumentNames(parseMessage(text))].sort(), ['n', 'side']);
    assert.equal(say('{a, select, x {# stays} other {no}}', { a: 'x' }), '# stays');
  });

  test('a message that cannot be read says where', () => {
    for (const bad of ['{', 'a }', '{n, plural, one {x}}', '{n, plural, other {x}', '{n, bogus, other {x}}', '{, plural}', '{n plural}']) {
      assert.throws(() => parseMessage(bad), MessageError, bad);
    }
    assert.throws(() => parseMessage('{n, plural, one {x}}'), /plural without other/);
  });
});

describe('the catalogs', () => {
  const folder = join(ROOT, 'web', 'locales');
  const files = readdirSync(folder).filter((name) => name.endsWith('.json'));
  test('German, French, Spanish and Arabic are there', () => {
    assert.deepEqual(files.sort(), ['ar.json', 'de.json', 'es.json', 'fr.json']);
  });
  for (const file of files) {
    test(`${file}: every message reads, with its source's arguments`, () => {
      const catalog = JSON.parse(readFileSync(join(folder, file), 'utf8'));
      const problems = [];
      for (const [source, translation] of Object.entries(catalog)) {
        try {
          const want = [...argumentNames(parseMessage(source))].sort().join(',');
          const have = [...argumentNames(parseMessage(translation))].sort().join(',');
          if (want !== have) problems.push(`${source}: arguments ${have} instead of ${want}`);
          if (typeof translation !== 'string' || !translation.trim()) problems.push(`${source}: empty`);
        } catch (error) {
          problems.push(`${source}: ${error.message}`);
        }
      }
      assert.deepEqual(problems, []);
      assert.ok(Object.keys(catalog).length > 100, `${file} has ${Object.keys(catalog).length} messages`);
    });
  }
});
