// Chess960 in the browser (issue 40): the lobby starts a Chess960 game and
// the game page says so; castling by dragging the king onto its own rook,
// and a castle queued as a premove by clicking the king's landing square.
// Real rookery-server, real headless Chromium; every test fails on console
// errors.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  api, browserSuite, expectPiece, friendGame as createFriendGame, openPage, screenshot, seatIn, waitUntil,
} from './harness.mjs';

const suite = browserSuite();
const state = (id) => api(suite.url, 'GET', `/api/games/${id}`);
const move = (game, uci, seat) => api(suite.url, 'POST', `/api/games/${game.id}/move`, { body: { uci }, token: seat.token });

// Start 759, RKBNNRQB: White's king on b1 castles long onto its a1 rook
// (landing on c1, the rook jumping to d1); Black's castles short from b8,
// its rook already on f8.
const START = 759;
const OPENING = ['d2d3', 'd7d6', 'c1d2', 'c8d7', 'd1e3', 'd8e6'];

async function drag(page, from, to) {
  const a = await page.locator(`.board [data-square="${from}"]`).boundingBox();
  const b = await page.locator(`.board [data-square="${to}"]`).boundingBox();
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(a.x + a.width, a.y + a.height / 2, { steps: 5 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 5 });
  await page.mouse.up();
}

describe('Chess960', () => {
  test('the lobby starts a Chess960 game against the computer, shown as such', { timeout: 120_000 }, async () => {
    const page = await openPage(await suite.newContext(), suite.errors, `${suite.url}/`);
    await page.getByRole('radio', { name: 'The computer' }).check();
    await page.selectOption('#level', '1');
    await page.selectOption('#variant', 'chess960');
    await page.getByRole('radio', { name: 'White', exact: true }).check();
    await page.getByRole('button', { name: 'Play the computer' }).click();
    await page.waitForURL(/\/games\/[^/]+$/);
    const id = new URL(page.url()).pathname.split('/').pop();
    const game = await state(id);
    assert.equal(game.variant, 'chess960');
    await page.locator('.game-meta').getByText('Chess960').waitFor();
    // The board shows the drawn start: White's back rank as the FEN has it.
    const rank = game.initial_fen.split('/')[7].split(' ')[0];
    for (const [index, letter] of [...rank].entries()) {
      await expectPiece(page, `${'abcdefgh'[index]}1`, `w${letter}`);
    }
  });

  test('castling by dragging the king onto its rook, and a castle premoved on the king\'s square', { timeout: 120_000 }, async () => {
    const game = await createFriendGame(suite.url, { variant: 'chess960', chess960_start: START });
    for (const [ply, uci] of OPENING.entries()) await move(game, uci, ply % 2 === 0 ? game.white : game.black);

    const white = await openPage(await seatIn(await suite.newContext(), game.id, game.white), suite.errors, `${suite.url}/games/${game.id}`);
    await white.getByText('Your move.').waitFor();
    await expectPiece(white, 'b1', 'wK');
    // The king put on its own rook castles long: king c1, rook d1.
    await drag(white, 'b1', 'a1');
    await expectPiece(white, 'c1', 'wK');
    await expectPiece(white, 'd1', 'wR');
    const castled = await state(game.id);
    assert.equal(castled.moves.at(-1), 'b1a1');
    assert.equal(castled.san.at(-1), 'O-O-O');
    await screenshot(white, 'chess960-castled');

    for (const [ply, uci] of ['e8f6', 'e1f3', 'g7g6', 'h2h3', 'g8g7'].entries()) {
      await move(game, uci, ply % 2 === 0 ? game.black : game.white);
    }
    // Black, while White thinks, clicks the king and then its castling
    // square g8 (no other king move goes there): the castle is queued, and
    // played king takes rook once White has moved.
    const black = await openPage(await seatIn(await suite.newContext(), game.id, game.black), suite.errors, `${suite.url}/games/${game.id}`);
    await black.getByText('Waiting for your opponent to move.').waitFor();
    await black.click('.board [data-square="b8"]');
    await black.click('.board [data-square="g8"]');
    await black.waitForSelector('.board [data-square="b8"].premove');
    assert.equal((await state(game.id)).moves.length, 12, 'nothing sent before the turn');
    await move(game, 'a2a3', game.white);
    await waitUntil(async () => (await state(game.id)).moves.length === 14, { what: 'the premoved castle' });
    const done = await state(game.id);
    assert.equal(done.moves.at(-1), 'b8f8');
    assert.equal(done.san.at(-1), 'O-O');
    await expectPiece(black, 'g8', 'bK');
    await expectPiece(black, 'f8', 'bR');
    await expectPiece(white, 'g8', 'bK');
  });
});
