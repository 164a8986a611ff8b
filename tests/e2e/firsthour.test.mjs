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
// land in artifacts/e2e/, and in docs/screenshots/ with E2E_DOC_SCREENSHOTS=1.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  api, browserSuite, clickMove, docShot, expectPiece, friendGame as createFriendGame, openPage, screenshot, seatIn, waitUntil,
} from './harness.mjs';

// A small, fixed search budget per analysed position: quick and deterministic.
process.env.ROOKERY_ANALYSIS_NODES = '20000';

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

const SICILIAN = '1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6';
const SICILIAN_UCI = ['e2e4', 'c7c5', 'g1f3', 'd7d6', 'd2d4', 'c5d4', 'f3d4', 'g8f6', 'b1c3', 'a7a6'];
const START = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';

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

async function seatedPage(gameId, seat, options) {
  const context = await newContext(options);
  if (seat) await seatIn(context, gameId, seat);
  return openPage(context, suite.errors, `${suite.url}/games/${gameId}`);
}

// Chromium logs a refused request (a documented 4xx) as a console error:
// the test that expects one takes it off the list.
function expectRefused(status) {
  const index = suite.errors.findIndex((line) => line.includes(`status of ${status}`));
  assert.ok(index >= 0, `a ${status} was expected among: ${suite.errors.join('\n')}`);
  suite.errors.splice(index, 1);
}

// A finished friend game from these moves: its id and seats.
async function finishedGame(moves) {
  const game = await friendGame();
  for (const [index, uci] of moves.entries()) await move(game.id, index % 2 === 0 ? game.white : game.black, uci);
  return game;
}

async function importPgn(page, pgn) {
  await page.locator('#pgn-text').fill(pgn);
  await page.getByRole('button', { name: 'Import', exact: true }).click();
}

// Relative luminance (0 black, 1 white) of a CSS colour "rgb(r, g, b)".
function luminance(color) {
  const [r, g, b] = color.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

// What the evaluation graph shows at a fraction of its width and height:
// the class and fill of the topmost shape there.
async function graphAt(page, fx, fy) {
  await page.locator('.eval-svg').scrollIntoViewIfNeeded();
  const box = await page.locator('.eval-svg').boundingBox();
  return page.evaluate(([x, y]) => {
    const el = document.elementFromPoint(x, y);
    return { cls: el.getAttribute('class') || el.tagName, fill: getComputedStyle(el).fill };
  }, [box.x + box.width * fx, box.y + box.height * fy]);
}

describe('a new person’s first hour, in Chromium', () => {
  test('a takeback against the computer asks first and says the game turns casual; the header says Casual once; the scoreboard lists every reason', { timeout: 120_000 }, async () => {
    const created = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'ai', level: 3 } },
    });
    const id = created.game.id;
    const page = await seatedPage(id, created.seat);
    page.on('dialog', (dialog) => {
      suite.errors.push(`a browser dialog was opened: ${dialog.message()}`);
      dialog.dismiss().catch(() => {});
    });
    const levels = await api(suite.url, 'GET', '/api/levels');
    const header = page.locator('.game-head');
    await page.getByText('Your move.').waitFor();
    // The level's own name, and nothing that reads like a kind of game.
    await page.locator('.game-title').getByText(`Rookery AI 3 · ${levels[2].name}`).waitFor();
    assert.doesNotMatch(await header.innerText(), /casual/i, 'a rated game');

    await clickMove(page, 'e2e4');
    await waitUntil(async () => (await state(id)).moves.length === 2, { what: 'the computer to reply' });
    await page.getByText('Your move.').waitFor();
    const takeback = page.getByRole('button', { name: 'Take back move' });
    assert.match(await takeback.getAttribute('title'), /game becomes casual/);

    // The first click only asks; keeping the game rated sends nothing.
    await takeback.click();
    const confirm = page.locator('.takeback-confirm');
    await confirm.waitFor();
    assert.match(await confirm.innerText(), /makes this game casual: its result will not count on the scoreboard/);
    await screenshot(page, 'takeback-confirm');
    await page.getByRole('button', { name: 'Keep playing rated' }).click();
    await confirm.waitFor({ state: 'hidden' });
    let now = await state(id);
    assert.equal(now.moves.length, 2);
    assert.equal(now.rated, true);

    await takeback.click();
    await page.getByRole('button', { name: 'Take back and play casual' }).click();
    await expectPiece(page, 'e2', 'wP');
    await page.locator('.game-meta').getByText('Casual: a move was taken back against the computer').waitFor();
    now = await state(id);
    assert.deepEqual(now.moves, []);
    assert.equal(now.rated, false);
    const words = (await header.innerText()).match(/casual/gi) || [];
    assert.equal(words.length, 1, await header.innerText());

    await page.goto(`${suite.url}/scoreboard`);
    await page.locator('.casual-reasons li').first().waitFor();
    const reasons = await page.locator('.casual-reasons li').allTextContents();
    assert.equal(reasons.length, 3, reasons.join(' | '));
    assert.match(reasons[0], /custom position/);
    assert.match(reasons[0], /imported game/);
    assert.match(reasons[1], /less than a minute/);
    assert.match(reasons[2], /computer granted a takeback/);
  });

  test('the PGN import preview fits its card at every width, light and dark', { timeout: 120_000 }, async () => {
    for (const [name, options] of LAYOUTS) {
      const page = await openPage(await newContext(options), suite.errors, `${suite.url}/`);
      await importPgn(page, SICILIAN);
      await page.locator('.import-ply').getByText('After 5… a6').waitFor();
      assert.ok(await pageFits(page), `${name}: the page is wider than the screen`);
      assert.equal(await within(page, '.import-board .board', '.card.import'), true, name);
      // The h-file is on the board, not cut off.
      assert.equal(await within(page, '.import-board [data-square="h1"]', '.card.import'), true, name);
      if (name === 'desktop') await docShot(page.locator('.card.import'), 'import');
    }
  });

  test('continuing an import keeps its whole history, with the side, the level and the real names', { timeout: 120_000 }, async () => {
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/`);
    // Without name tags the header says so in words, not "? v ?".
    await importPgn(page, SICILIAN);
    await page.locator('.import-title').getByText('Imported game · 5 moves · unfinished').waitFor();
    await importPgn(page, `[White "Magnus Carlsen"]\n[Black "Hikaru Nakamura"]\n[Result "*"]\n\n${SICILIAN} *`);
    await page.locator('.import-title').getByText('Magnus Carlsen v Hikaru Nakamura · 5 moves · unfinished').waitFor();
    assert.doesNotMatch(await page.locator('.import-title').textContent(), /\?/);

    // White is to move; the person takes black, against level 5.
    const choices = page.locator('.import-continue');
    assert.equal(await choices.getByRole('radio', { name: 'White' }).isChecked(), true);
    await choices.getByRole('radio', { name: 'Black' }).check();
    await page.selectOption('#import-level', '5');
    await page.getByRole('button', { name: 'Continue as black v computer' }).click();
    await page.waitForURL(/\/games\/[^/]+$/);
    const id = new URL(page.url()).pathname.split('/').pop();
    const game = await state(id);
    assert.equal(game.initial_fen, START);
    assert.deepEqual(game.moves.slice(0, SICILIAN_UCI.length), SICILIAN_UCI);
    assert.deepEqual(game.white, { ...game.white, kind: 'ai', level: 5 });
    assert.equal(game.black.kind, 'human');
    await page.getByText('You play black').waitFor();
    // The move list begins at the first imported move, and so does the PGN.
    assert.equal(await page.locator('.moves [data-ply="1"]').textContent(), 'e4');
    assert.equal(await page.locator('.moves .move-number').first().textContent(), '1.');
    const pgn = await api(suite.url, 'GET', `/api/games/${id}/pgn`);
    assert.match(pgn, /\n1\. e4 c5 2\. Nf3 d6 3\. d4 cxd4 4\. Nxd4 Nf6 5\. Nc3 a6/);

    // A custom start keeps its FEN, and the moves played from it.
    const fen = '4k3/8/8/8/8/8/4P3/4K3 w - - 0 1';
    await page.goto(`${suite.url}/`);
    await importPgn(page, `[SetUp "1"]\n[FEN "${fen}"]\n\n1. e4 Kd7 *`);
    await page.locator('.import-ply').getByText('After 1… Kd7').waitFor();
    await page.getByRole('button', { name: 'Continue with a friend' }).click();
    await page.waitForURL(/\/games\/[^/]+$/);
    const custom = await state(new URL(page.url()).pathname.split('/').pop());
    assert.equal(custom.initial_fen, fen);
    assert.deepEqual(custom.moves, ['e2e4', 'e8d7']);
    assert.equal(custom.turn, 'white');
  });

  test('moves are full moves: the watch list, the game’s history and the import', { timeout: 120_000 }, async () => {
    // 1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. c3 Nf6 5. d3 d6 6. O-O O-O 7. Re1 a6 8. Nbd2 Ba7: 16 plies.
    const plies = ['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1c4', 'f8c5', 'c2c3', 'g8f6', 'd2d3', 'd7d6', 'e1g1', 'e8g8', 'f1e1', 'a7a6', 'b1d2', 'c5a7'];
    const game = await friendGame();
    for (const [index, uci] of plies.entries()) await move(game.id, index % 2 === 0 ? game.white : game.black, uci);
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/watch`);
    const item = page.locator(`.game-item[data-game-id="${game.id}"] .game-details`);
    await item.waitFor();
    assert.match(await item.textContent(), /· 8 moves ·/);

    await page.goto(`${suite.url}/games/${game.id}`);
    await page.locator('.moves [data-ply="6"]').click();
    const status = page.locator('.status');
    await waitUntil(async () => /^Viewing the position after 3… Bc5\./.test(await status.textContent()), { what: 'the status of a history position' });
    assert.doesNotMatch(await status.textContent(), /\d+ of \d+/);
    await page.locator('.moves [data-ply="5"]').click();
    await waitUntil(async () => /^Viewing the position after 3\. Bc4\./.test(await status.textContent()), { what: 'a white move' });

    await page.goto(`${suite.url}/`);
    await importPgn(page, '1. e4 e5 2. Nf3 Nc6 3. Bb5 *');
    await page.locator('.import-ply').getByText('After 3. Bb5').waitFor();
    assert.match(await page.locator('.import-title').textContent(), /· 3 moves ·/);
  });

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
      assert.equal(await page.locator('.site-header .site-nav a').count(), 5, name);
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

  test('the evaluation graph takes the colour of the side ahead; mates say who and in how many; one result on the end screen; no focus ring around the page', { timeout: 180_000 }, async () => {
    // The Blackburne Shilling trap: White wins a pawn, then Black's queen
    // turns the game and mates. The end of the graph is Black's.
    const trap = await finishedGame(['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1c4', 'c6d4', 'f3e5', 'd8g5', 'e5f7', 'g5g2', 'h1f1', 'g2e4', 'c4e2', 'd4f3']);
    const page = await seatedPage(trap.id, trap.black);
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.locator('.banner-headline').getByText('Black wins').waitFor();
    const shown = await page.locator('.game-page').innerText();
    assert.equal(shown.match(/Black wins/g).length, 1, shown);
    assert.equal(await page.locator('.banner-verdict').textContent(), 'You won!');
    await docShot(page, 'end-screen');

    await page.getByRole('button', { name: 'Analyse with the engine' }).click();
    await page.waitForSelector('.acpl:has-text("Average centipawn loss")', { timeout: 120_000 });
    // Near the end, below the middle: Black's dark area; above it, no White area.
    const low = await graphAt(page, 0.97, 0.75);
    assert.match(low.cls, /eval-area black/);
    assert.ok(luminance(low.fill) < 0.3, `Black's area is dark: ${low.fill}`);
    const high = await graphAt(page, 0.97, 0.25);
    assert.doesNotMatch(high.cls, /eval-area/);
    // 7. Be2: Black mates in one; after 7... Nf3#, Black has won.
    await page.locator('.moves [data-ply="13"]').click();
    await page.locator('.advice').getByText('Mate in 1 for Black.').waitFor();
    await docShot(page.locator('.analysis-box'), 'graph');
    await page.locator('.moves [data-ply="14"]').click();
    await page.locator('.advice').getByText('Checkmate: Black has won.').waitFor();
    assert.doesNotMatch(await page.locator('.advice').textContent(), /Evaluation mate/);

    // A click on the graph, then the arrow keys: no focus ring around the page.
    const box = await page.locator('.eval-svg').boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.press('ArrowLeft');
    const ring = await page.evaluate(() => {
      const el = document.activeElement;
      return { tag: el.tagName, outline: getComputedStyle(el).outlineStyle };
    });
    assert.ok(ring.tag === 'BODY' || ring.outline === 'none', `focus ring on ${ring.tag}: ${ring.outline}`);

    // Scholar's mate: White wins, and the end of the graph is White's.
    const scholars = await finishedGame(['e2e4', 'e7e5', 'd1h5', 'b8c6', 'f1c4', 'g8f6', 'h5f7']);
    await page.goto(`${suite.url}/games/${scholars.id}`);
    await page.getByRole('button', { name: 'Analyse with the engine' }).click();
    await page.waitForSelector('.acpl:has-text("Average centipawn loss")', { timeout: 120_000 });
    const top = await graphAt(page, 0.97, 0.25);
    assert.match(top.cls, /eval-area white/);
    assert.ok(luminance(top.fill) > 0.8, `White's area is light: ${top.fill}`);
    assert.doesNotMatch((await graphAt(page, 0.97, 0.75)).cls, /eval-area/);
    await page.locator('.moves [data-ply="6"]').click();
    await page.locator('.advice').getByText('Mate in 1 for White.').waitFor();
  });

  test('an open seek is listed once in the lobby', { timeout: 60_000 }, async () => {
    const created = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white', visibility: 'open' },
    });
    const id = created.game.id;
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/`);
    await page.locator(`#open-seeks .game-item[data-game-id="${id}"]`).waitFor();
    // Both lists have been drawn.
    await page.locator('.lobby .game-list-holder').nth(1).locator('ul, p').first().waitFor();
    assert.equal(await page.locator(`.game-item[data-game-id="${id}"]`).count(), 1);
  });

  test('a name-taken error gives way to the next message', { timeout: 60_000 }, async () => {
    await api(suite.url, 'POST', '/api/players', { body: { name: 'first_hour_taken' } });
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/`);
    const card = page.locator('.player-card');
    await page.locator('#player-name').fill('first_hour_taken');
    await page.getByRole('button', { name: 'Save name' }).click();
    await card.getByText('That name is taken. Try another.').waitFor();
    expectRefused(409);
    await page.locator('#player-name').fill('not a name!');
    await page.getByRole('button', { name: 'Save name' }).click();
    await card.getByText('Use 1–20 letters, digits, _ or -.').waitFor();
    assert.doesNotMatch(await card.innerText(), /taken/);
  });

  test('no AudioContext before the first gesture, and sounds after it', { timeout: 60_000 }, async () => {
    // Chromium warns of every AudioContext made before a user gesture;
    // headless Chromium does not print that warning, so the test counts
    // the contexts the page makes.
    const game = await friendGame();
    const context = await newContext();
    await seatIn(context, game.id, game.black);
    await context.addInitScript(() => {
      window.playedSounds = [];
      window.audioContexts = 0;
      window.startedTones = 0;
      window.addEventListener('rookery:sound', (event) => window.playedSounds.push(event.detail));
      const Original = window.AudioContext;
      window.AudioContext = class Counted extends Original {
        constructor(...args) {
          super(...args);
          window.audioContexts += 1;
        }
      };
      const start = OscillatorNode.prototype.start;
      OscillatorNode.prototype.start = function counted(...args) {
        window.startedTones += 1;
        return start.apply(this, args);
      };
    });
    const page = await openPage(context, suite.errors, `${suite.url}/games/${game.id}`);
    const seen = () => page.evaluate(() => ({ sounds: window.playedSounds.slice(), contexts: window.audioContexts, tones: window.startedTones }));
    await page.getByText('Waiting for your opponent to move.').waitFor();
    await move(game.id, game.white, 'e2e4');
    await expectPiece(page, 'e4', 'wP');
    await waitUntil(async () => (await seen()).sounds.includes('move'), { what: 'the move sound' });
    assert.deepEqual(await seen(), { sounds: ['move'], contexts: 0, tones: 0 });
    // The first gesture makes the context; the next move is heard.
    await clickMove(page, 'e7e5');
    await expectPiece(page, 'e5', 'bP');
    await waitUntil(async () => (await seen()).tones > 0, { what: 'a tone after the gesture' });
    assert.equal((await seen()).contexts, 1);
  });

  test('board colours and piece sets are chosen in the settings panel, remembered, and fit a phone', { timeout: 120_000 }, async () => {
    const game = await friendGame();
    const page = await seatedPage(game.id, game.white);
    await page.getByText('Your move.').waitFor();
    const darkSquare = () => page.evaluate(() => getComputedStyle(document.querySelector('.board .sq.dark')).backgroundColor);
    const pieceSet = () => page.evaluate(() => document.querySelector('.board [data-piece="wK"] svg').getAttribute('class'));
    const wood = await darkSquare();
    assert.equal(await pieceSet(), 'pieces-classic');

    await page.getByRole('button', { name: 'Board settings' }).click();
    const panel = page.getByRole('dialog', { name: 'Board settings' });
    await panel.waitFor();
    await panel.getByRole('radio', { name: 'Green' }).check();
    await panel.getByRole('radio', { name: 'Flat' }).check();
    // The board changes at once, behind the panel.
    await waitUntil(async () => (await darkSquare()) !== wood, { what: 'the green board' });
    assert.equal(await darkSquare(), 'rgb(120, 150, 90)');
    assert.equal(await pieceSet(), 'pieces-flat');
    await screenshot(page, 'board-settings');
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'hidden' });

    await page.reload();
    await page.getByText('Your move.').waitFor();
    assert.equal(await darkSquare(), 'rgb(120, 150, 90)');
    assert.equal(await pieceSet(), 'pieces-flat');
    assert.equal(await page.evaluate(() => document.querySelectorAll('.board [data-piece] svg.pieces-classic').length), 0);
    // Still a move by clicks with the other pieces.
    await clickMove(page, 'e2e4');
    await expectPiece(page, 'e4', 'wP');

    // Every theme gives the board its own colours.
    await page.getByRole('button', { name: 'Board settings' }).click();
    const colours = new Set();
    for (const theme of ['Wood', 'Green', 'Blue', 'Grey']) {
      await panel.getByRole('radio', { name: theme }).check();
      colours.add(await darkSquare());
    }
    assert.equal(colours.size, 4, [...colours].join(' '));
    await panel.getByRole('radio', { name: 'Classic' }).check();
    assert.equal(await pieceSet(), 'pieces-classic');
    await panel.getByRole('button', { name: 'Done' }).click();

    for (const [name, options] of LAYOUTS.filter(([layout]) => layout.startsWith('phone'))) {
      const phone = await seatedPage(game.id, game.white, options);
      await phone.getByRole('button', { name: 'Board settings' }).click();
      const phonePanel = phone.getByRole('dialog', { name: 'Board settings' });
      await phonePanel.waitFor();
      assert.ok(await pageFits(phone), `${name}: wider than the screen`);
      await screenshot(phone, `board-settings-${name.replace(', ', '-')}`);
      const box = await phonePanel.boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= 390, `${name}: the panel is off the screen: ${JSON.stringify(box)}`);
    }
  });

  test('whoever makes an offer is told its answer: declined, declined by a move, expired, withdrawn', { timeout: 120_000 }, async () => {
    const game = await friendGame();
    const white = await seatedPage(game.id, game.white);
    const black = await seatedPage(game.id, game.black);
    const whiteNotice = white.locator('.offers .offer-answer');
    const blackNotice = black.locator('.offers .offer-answer');
    await clickMove(white, 'e2e4');
    await expectPiece(black, 'e4', 'wP');

    // Black offers a draw; White declines; Black is told, in the live region.
    await black.getByRole('button', { name: 'Offer draw' }).click();
    await white.getByRole('button', { name: 'Decline draw' }).click();
    await blackNotice.getByText('Your draw offer was declined.').waitFor();
    await screenshot(black, 'offer-declined');
    assert.equal(await black.locator('.offers:has(.offer-answer)').getAttribute('aria-live'), 'polite');
    assert.equal(await whiteNotice.isVisible(), false, 'the one who declined is not told');
    // The next move dismisses the notice.
    await clickMove(black, 'e7e5');
    await expectPiece(white, 'e5', 'bP');
    await blackNotice.waitFor({ state: 'hidden' });

    // White offers and plays on; Black's reply declines it.
    await white.getByRole('button', { name: 'Offer draw' }).click();
    await black.getByText('Your opponent offers a draw.').waitFor();
    await clickMove(white, 'g1f3');
    await expectPiece(black, 'f3', 'wN');
    await clickMove(black, 'b8c6');
    await whiteNotice.getByText('Your draw offer was declined.').waitFor();

    // White asks to take back Bc4; Black moves instead: the request expired.
    await clickMove(white, 'f1c4');
    await expectPiece(black, 'c4', 'wB');
    await white.getByRole('button', { name: 'Take back move' }).click();
    await black.getByText('Your opponent asks to take back their last move.').waitFor();
    await clickMove(black, 'g8f6');
    await whiteNotice.getByText('Your takeback request expired: a move was made.').waitFor();

    // White offers a draw and withdraws it: Black hears of it.
    await white.getByRole('button', { name: 'Offer draw' }).click();
    await black.getByText('Your opponent offers a draw.').waitFor();
    await white.getByRole('button', { name: 'Withdraw draw offer' }).click();
    await blackNotice.getByText('Your opponent withdrew their draw offer.').waitFor();
    // Left alone, a notice goes after a few seconds.
    await blackNotice.waitFor({ state: 'hidden', timeout: 15_000 });
  });
});
