// The site in other languages (issue 36), in real Chromium against the
// real server: German chosen from the browser's languages (lobby, game
// page, numbers written the German way, the server's own error words kept
// English inside a German sentence); Arabic written right to left (the
// page mirrored, the board not: a1 stays bottom left for White); plurals
// by each language's rules (German's two forms, Arabic's one, two and
// few); the settings' picker persisting a choice over the browser's and
// giving it back. Screenshots of the lobby, a game page, the search and
// the settings in German and Arabic land in artifacts/e2e/, and in
// docs/screenshots/ with E2E_DOC_SCREENSHOTS=1.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PASSWORD, api, browserSuite, docShot, expectPiece, openPage, seatIn, waitUntil } from './harness.mjs';

const suite = browserSuite();
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

const inLanguage = (locale, options = {}) => suite.newContext({ locale, ...options });

// A game against the computer, created through the API: its id and seat.
async function computerGame() {
  const created = await api(suite.url, 'POST', '/api/games', {
    body: { white: { kind: 'human' }, black: { kind: 'ai', level: 1 }, as: 'white' },
  });
  return { id: created.game.id, seat: created.seat };
}

// A game between two anonymous people, `plies` moves played.
async function playedGame(moves) {
  const created = await api(suite.url, 'POST', '/api/games', {
    body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white' },
  });
  const joined = await api(suite.url, 'POST', `/api/games/${created.game.id}/join`);
  for (const [index, uci] of moves.entries()) {
    const seat = index % 2 === 0 ? created.seat : joined.seat;
    await api(suite.url, 'POST', `/api/games/${created.game.id}/move`, { body: { uci }, token: seat.token });
  }
  return created.game.id;
}

describe('the site in other languages', () => {
  test('German from the browser: the lobby, a game, numbers, and the server\u2019s words kept', { timeout: 120_000 }, async () => {
    const context = await inLanguage('de-DE');
    const page = await openPage(context, suite.errors, `${suite.url}/`);
    await page.locator('.site-nav').getByRole('link', { name: 'Spielen' }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'de');
    assert.equal(await page.evaluate(() => document.documentElement.dir), 'ltr');
    await page.getByRole('heading', { name: 'Neue Partie' }).waitFor();
    await docShot(page, 'lang-lobby-de');

    // The header's search, in German.
    for (const name of ['anna_de', 'anton_de']) {
      await api(suite.url, 'POST', '/api/accounts', { body: { name, password: PASSWORD } });
    }
    assert.equal(await page.locator('#player-search').getAttribute('placeholder'), 'Spieler finden');
    await page.locator('#player-search').fill('an');
    await page.locator('.player-search-list').getByText('anton_de').waitFor();
    await page.locator('.player-search-list').getByText('anna_de').waitFor();
    await docShot(page, 'lang-search-de');
    await page.locator('#player-search').fill('zz');
    await page.getByText('Kein Name beginnt mit „zz“.').waitFor();

    const game = await computerGame();
    await seatIn(context, game.id, game.seat);
    await page.goto(`${suite.url}/games/${game.id}`);
    await page.getByText('Du bist am Zug.').waitFor();
    await page.getByRole('button', { name: 'Aufgeben' }).waitFor();
    await page.getByRole('button', { name: 'Brett drehen' }).waitFor();
    await docShot(page, 'lang-game-de');

    // The analysis board: nodes written the German way, and a refusal in
    // German around the server's own English reason.
    await page.goto(`${suite.url}/analysis`);
    await page.locator('.board-depth').getByText(/^Tiefe \d+, \d{1,3}(\.\d{3})+ Knoten\.$/).waitFor({ timeout: 60_000 });
    await page.locator('summary').getByText('FEN oder PGN laden').click();
    await page.locator('#fen-input').fill('4k3/8/8/8/8/8/8/3KK3 w - - 0 1');
    await page.getByRole('button', { name: 'FEN laden' }).click();
    await page.getByText('Diese Stellung kann nicht analysiert werden: bad fen: white must have exactly one king').waitFor();
    await waitUntil(() => suite.errors.some((line) => line.includes('status of 400')), { what: 'the logged 400' });
    suite.errors.splice(0, suite.errors.length, ...suite.errors.filter((line) => !line.includes('status of 400')));
  });

  test('plurals by each language\u2019s rules', { timeout: 120_000 }, async () => {
    // One full move, two, and three.
    await playedGame(['e2e4', 'e7e5']);
    await playedGame(['e2e4', 'e7e5', 'g1f3', 'b8c6']);
    await playedGame(['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1c4', 'g8f6']);
    const german = await openPage(await inLanguage('de-DE'), suite.errors, `${suite.url}/watch`);
    for (const text of ['1 Zug', '2 Züge', '3 Züge']) await german.getByText(text, { exact: false }).first().waitFor();
    const arabic = await openPage(await inLanguage('ar'), suite.errors, `${suite.url}/watch`);
    for (const text of ['نقلة واحدة', 'نقلتان', 'نقلات']) await arabic.getByText(text, { exact: false }).first().waitFor();
    const english = await openPage(await inLanguage('en-GB'), suite.errors, `${suite.url}/watch`);
    for (const text of ['1 move', '2 moves', '3 moves']) await english.getByText(text, { exact: false }).first().waitFor();
  });

  for (const [name, options] of [['desktop', {}], ['phone', PHONE]]) {
    test(`Arabic is written right to left, and the board is not mirrored (${name})`, { timeout: 120_000 }, async () => {
      const context = await inLanguage('ar-EG', options);
      const game = await computerGame();
      await seatIn(context, game.id, game.seat);
      const page = await openPage(context, suite.errors, `${suite.url}/games/${game.id}`);
      await page.getByText('دورك.').waitFor();
      assert.equal(await page.evaluate(() => document.documentElement.dir), 'rtl');
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'ar');
      // The page is mirrored: the brand on the right, "Log in" to its left.
      const brand = await page.locator('.brand').boundingBox();
      const login = await page.locator('#login-link').boundingBox();
      assert.ok(brand.x > login.x, `the brand (${brand.x}) is right of "Log in" (${login.x})`);
      // The board is not: a1 bottom left, h1 bottom right, a8 above a1.
      const a1 = await page.locator('[data-square="a1"]').boundingBox();
      const h1 = await page.locator('[data-square="h1"]').boundingBox();
      const a8 = await page.locator('[data-square="a8"]').boundingBox();
      assert.ok(a1.x < h1.x, 'a1 is left of h1');
      assert.ok(a8.y < a1.y, 'a8 is above a1');
      assert.ok(Math.abs(a1.x - a8.x) < 1, 'the files line up');
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'the page fits');
      await expectPiece(page, 'e2', 'wP');
      if (name === 'desktop') await docShot(page, 'lang-game-ar');
    });
  }

  test('the picker persists a language over the browser\u2019s, and gives it back', { timeout: 120_000 }, async () => {
    const context = await inLanguage('de-DE');
    const page = await openPage(context, suite.errors, `${suite.url}/`);
    await page.locator('.site-nav').getByRole('link', { name: 'Spielen' }).waitFor();
    await page.locator('.settings-button').click();
    const picker = page.locator('#language-select');
    assert.equal(await picker.inputValue(), '', 'the browser\u2019s language until one is picked');
    assert.equal(await picker.locator('option').first().textContent(), 'Sprache des Browsers (Deutsch)');
    await docShot(page, 'lang-settings-de');
    await Promise.all([page.waitForNavigation(), picker.selectOption('fr')]);
    await page.locator('.site-nav').getByRole('link', { name: 'Jouer' }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('rookery:pref:lang')), '"fr"');
    // Kept on every page and every visit.
    await page.goto(`${suite.url}/scoreboard`);
    await page.getByRole('heading', { name: 'Classement', exact: true }).waitFor();
    const again = await openPage(context, suite.errors, `${suite.url}/`);
    await again.locator('.site-nav').getByRole('link', { name: 'Jouer' }).waitFor();
    // Arabic, then the browser's language again.
    await again.locator('.settings-button').click();
    await Promise.all([again.waitForNavigation(), again.locator('#language-select').selectOption('ar')]);
    await again.waitForFunction(() => document.documentElement.dir === 'rtl');
    await again.locator('.settings-button').click();
    await docShot(again, 'lang-settings-ar');
    await Promise.all([again.waitForNavigation(), again.locator('#language-select').selectOption('')]);
    await again.locator('.site-nav').getByRole('link', { name: 'Spielen' }).waitFor();
    assert.equal(await again.evaluate(() => localStorage.getItem('rookery:pref:lang')), null);
  });
});
