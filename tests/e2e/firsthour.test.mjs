// A new person's first hour (issue 22), in real Chromium against the real
// server: the takeback that makes a game casual asks first; the PGN import
// fits its card, keeps the whole game when continued, with the side and
// level chosen; "moves" are full moves; the site's own 404 page and names
// that fit their cards; the evaluation graph coloured by who is better;
// offers whose maker hears the answer; board colours and piece sets; and
// the small things (one seek listed once, a stale error cleared, no focus
// ring around the page, one result on the end screen, no AudioContext
// warning). Layout checks run at 1280×900 and on a 390×844 phone, light and
// dark. Every test fails on a console error. Screenshots for the README
// land in docs/screenshots/.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  ROOT, api, browserSuite, clickMove, expectPiece, friendGame as createFriendGame, openPage, screenshot, seatIn, waitUntil,
} from './harness.mjs';

const suite = browserSuite();
const newContext = (options) => suite.newContext(options);
const friendGame = (body) => createFriendGame(suite.url, body);
const state = (id) => api(suite.url, 'GET', `/api/games/${id}`);
const move = (id, seat, uci) => api(suite.url, 'POST', `/api/games/${id}/move`, { body: { uci }, token: seat.token });

const DESKTOP = { viewport: { width: 1280, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
// Where layout is checked: both sizes, light and dark.
const LAYOUTS = [
  ['desktop', DESKTOP],
  ['desktop, dark', { ...DESKTOP, colorScheme: 'dark' }],
  ['phone', PHONE],
  ['phone, dark', { ...PHONE, colorScheme: 'dark' }],
];

const DOCS = join(ROOT, 'docs', 'screenshots');
async function docShot(target, name) {
  mkdirSync(DOCS, { recursive: true });
  await target.screenshot({ path: join(DOCS, `${name}.png`) });
}

// The page is no wider than the screen (no sideways scrolling). A phone
// (isMobile) widens its layout viewport to fit wide content, so the measure
// is the screen's width, not innerWidth.
const pageFits = (page) => page.evaluate((width) => document.documentElement.scrollWidth <= width, page.viewportSize().width);

// What `inner` draws, its text included (text can overflow its element's
// box), lies within `outer`'s box (half a pixel of rounding allowed).
async function within(page, inner, outer) {
  return page.evaluate(([innerSelector, outerSelector]) => {
    const el = document.querySelector(innerSelector);
    const range = document.createRange();
    range.selectNodeContents(el);
    const b = document.querySelector(outerSelector).getBoundingClientRect();
    const ok = [el.getBoundingClientRect(), range.getBoundingClientRect()].every((a) => a.left >= b.left - 0.5
      && a.top >= b.top - 0.5 && a.right <= b.right + 0.5 && a.bottom <= b.bottom + 0.5);
    return ok || `${innerSelector} ${JSON.stringify(range.getBoundingClientRect())} outside ${outerSelector} ${JSON.stringify(b)}`;
  }, [inner, outer]);
}

describe('a new person’s first hour, in Chromium', () => {
  test('unknown addresses get the site’s 404 page with its header and a way back; /api keeps its JSON error', { timeout: 60_000 }, async () => {
    for (const path of ['/no/such/page', '/games/']) {
      const response = await fetch(`${suite.url}${path}`);
      assert.equal(response.status, 404, path);
      assert.match(response.headers.get('content-type'), /^text\/html/, path);
      const body = await response.text();
      assert.match(body, /class="site-header"/, path);
      assert.match(body, /Page not found/, path);
    }
    const apiMiss = await fetch(`${suite.url}/api/no/such`);
    assert.equal(apiMiss.status, 404);
    assert.equal((await apiMiss.json()).error.code, 'not_found');

    for (const [name, options] of LAYOUTS) {
      const context = await newContext(options);
      const page = await context.newPage();
      page.on('pageerror', (error) => suite.errors.push(`uncaught: ${error.message}`));
      const response = await page.goto(`${suite.url}/no/such/page`);
      assert.equal(response.status(), 404, name);
      await page.locator('h1').getByText('Page not found').waitFor();
      assert.equal(await page.locator('.site-header .site-nav a').count(), 3, name);
      assert.ok(await pageFits(page), `${name}: the 404 page is wider than the screen`);
      if (name === 'desktop') await docShot(page, '404');
      if (name === 'phone') {
        await page.getByRole('link', { name: 'Back to the lobby' }).click();
        await page.waitForURL(`${suite.url}/`);
        await page.locator('#new-game-title').waitFor();
      }
    }
  });

  test('a 20-character name fits the player page’s card at every width', { timeout: 60_000 }, async () => {
    const name = 'WWWWWWWWWWWWWWWWWWWW';
    await api(suite.url, 'POST', '/api/players', { body: { name } });
    for (const [layout, options] of LAYOUTS) {
      const page = await openPage(await newContext(options), suite.errors, `${suite.url}/players/${name}`);
      await page.locator('#player-rating').waitFor();
      assert.ok(await pageFits(page), `${layout}: the player page is wider than the screen`);
      assert.equal(await within(page, '.player-page h1', '.player-page .card'), true, layout);
    }
  });
});
