// Browser tests of the offers between players (issue 11): draw decline and
// withdrawal, takebacks, abort and rematch offers, in real Chromium against
// the real server. Every test fails on any console error.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  api, browserSuite, clickMove, expectPiece, friendGame as createFriendGame, openPage, screenshot, seatIn, unnamedControls, waitUntil,
} from './harness.mjs';

const suite = browserSuite();

const newContext = () => suite.newContext();

// A page of the game with the seat remembered, as the client keeps seats.
async function seatedPage(gameId, seat) {
  const context = await newContext();
  if (seat) await seatIn(context, gameId, seat);
  return openPage(context, suite.errors, `${suite.url}/games/${gameId}`);
}

const friendGame = () => createFriendGame(suite.url);

async function move(game, seat, uci) {
  return api(suite.url, 'POST', `/api/games/${game.id}/move`, { body: { uci }, token: seat.token });
}

const state = (id) => api(suite.url, 'GET', `/api/games/${id}`);

describe('offers between players in Chromium', () => {
  test('a draw offer is declined, then withdrawn', { timeout: 120_000 }, async () => {
    const game = await friendGame();
    const white = await seatedPage(game.id, game.white);
    const black = await seatedPage(game.id, game.black);
    const watcher = await seatedPage(game.id, null);
    await clickMove(white, 'e2e4');
    await expectPiece(black, 'e4', 'wP');

    await black.getByRole('button', { name: 'Offer draw' }).click();
    await white.getByText('Your opponent offers a draw.').waitFor();
    await watcher.getByText('Black offers a draw.').waitFor();
    await black.getByText('You offered a draw.').waitFor();
    // The region that shows offers is announced to screen readers.
    assert.equal(await white.locator('.offer-sheet').getAttribute('aria-live'), 'polite');
    await screenshot(white, 'offers-draw');
    assert.deepEqual(await unnamedControls(white), []);
    await white.getByRole('button', { name: 'Decline draw' }).click();
    await black.getByRole('button', { name: 'Offer draw' }).waitFor();
    await white.locator('.offer').waitFor({ state: 'hidden' });
    assert.equal((await state(game.id)).draw_offer, null);

    await black.getByRole('button', { name: 'Offer draw' }).click();
    await white.getByText('Your opponent offers a draw.').waitFor();
    await black.getByRole('button', { name: 'Withdraw draw offer' }).click();
    await white.locator('.offer').waitFor({ state: 'hidden' });
    await watcher.locator('.offer').waitFor({ state: 'hidden' });
    const after = await state(game.id);
    assert.equal(after.draw_offer, null);
    assert.equal(after.status, 'active');
  });

  test('a takeback is asked, declined, then accepted', { timeout: 120_000 }, async () => {
    const game = await friendGame();
    const white = await seatedPage(game.id, game.white);
    const black = await seatedPage(game.id, game.black);
    // Nothing to take back before a move of one's own.
    await white.getByText('Your move.').waitFor();
    assert.equal(await white.getByRole('button', { name: 'Take back move' }).isVisible(), false);
    await clickMove(white, 'e2e4');
    await expectPiece(black, 'e4', 'wP');
    await clickMove(black, 'e7e5');
    await expectPiece(white, 'e5', 'bP');

    await white.getByRole('button', { name: 'Take back move' }).click();
    await black.getByText('Your opponent asks to take back their last move.').waitFor();
    await white.getByText('You asked to take back your last move.').waitFor();
    await black.getByRole('button', { name: 'Decline takeback' }).click();
    await white.locator('.offer').waitFor({ state: 'hidden' });
    assert.equal((await state(game.id)).moves.length, 2);

    await white.getByRole('button', { name: 'Take back move' }).click();
    await screenshot(black, 'offers-takeback');
    await black.getByRole('button', { name: 'Accept takeback' }).click();
    // White's move and black's reply are undone, on both boards.
    for (const page of [white, black]) {
      await expectPiece(page, 'e2', 'wP');
      await expectPiece(page, 'e7', 'bP');
      await page.getByText('One move was taken back.').waitFor();
    }
    const after = await state(game.id);
    assert.deepEqual(after.moves, []);
    assert.equal(after.takebacks, 1);
    await white.getByText('Your move.').waitFor();
    await clickMove(white, 'd2d4');
    await expectPiece(black, 'd4', 'wP');
  });

  test('against the computer a takeback is granted at once and the game turns casual', { timeout: 120_000 }, async () => {
    const created = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'ai', level: 1 } },
    });
    const page = await seatedPage(created.game.id, created.seat);
    await page.getByText('Your move.').waitFor();
    await clickMove(page, 'e2e4');
    await waitUntil(async () => (await state(created.game.id)).moves.length === 2, { what: 'the computer to reply' });
    await page.getByText('Your move.').waitFor();
    await page.getByRole('button', { name: 'Take back move' }).click();
    // The page asks first: the takeback makes the game casual (issue 22).
    await page.getByRole('button', { name: 'Take back and play casual' }).click();
    await expectPiece(page, 'e2', 'wP');
    await page.locator('.game-meta').getByText('Casual').waitFor();
    const after = await state(created.game.id);
    assert.deepEqual(after.moves, []);
    assert.equal(after.rated, false);
  });

  test('a game is aborted before each side has moved, not after', { timeout: 120_000 }, async () => {
    const game = await friendGame();
    const black = await seatedPage(game.id, game.black);
    await move(game, game.white, 'e2e4');
    await expectPiece(black, 'e4', 'wP');
    await black.getByRole('button', { name: 'Abort game' }).click();
    await black.locator('.banner-headline').getByText('Game aborted').waitFor();
    const aborted = await state(game.id);
    assert.equal(aborted.termination, 'aborted');
    assert.equal(aborted.result, null);

    const later = await friendGame();
    const white = await seatedPage(later.id, later.white);
    await white.getByRole('button', { name: 'Abort game' }).waitFor();
    await move(later, later.white, 'e2e4');
    await move(later, later.black, 'e7e5');
    await expectPiece(white, 'e5', 'bP');
    await white.getByRole('button', { name: 'Abort game' }).waitFor({ state: 'hidden' });
    await white.getByRole('button', { name: 'Resign' }).waitFor();
  });

  test('a rematch is offered, declined, withdrawn, then accepted by both', { timeout: 120_000 }, async () => {
    const game = await friendGame();
    await move(game, game.white, 'e2e4');
    const white = await seatedPage(game.id, game.white);
    const black = await seatedPage(game.id, game.black);
    const watcher = await seatedPage(game.id, null);
    await api(suite.url, 'POST', `/api/games/${game.id}/resign`, { token: game.black.token });
    for (const page of [white, black]) await page.locator('.banner-headline').getByText('White wins').waitFor();

    await white.getByRole('button', { name: 'Rematch', exact: true }).click();
    await black.getByText('Your opponent offers a rematch.').waitFor();
    await white.getByText('You offered a rematch.').waitFor();
    await black.getByRole('button', { name: 'Decline rematch' }).click();
    await white.locator('.offer').waitFor({ state: 'hidden' });
    assert.equal((await state(game.id)).rematch_offer, null);

    await black.getByRole('button', { name: 'Rematch', exact: true }).click();
    await white.getByText('Your opponent offers a rematch.').waitFor();
    await black.getByRole('button', { name: 'Withdraw rematch offer' }).click();
    await white.locator('.offer').waitFor({ state: 'hidden' });

    await white.getByRole('button', { name: 'Rematch', exact: true }).click();
    await black.getByText('Your opponent offers a rematch.').waitFor();
    // A spectator's page of a finished game has no socket: it reads the
    // offer when loaded.
    await watcher.reload();
    await watcher.getByText('White offers a rematch.').waitFor();
    await screenshot(black, 'offers-rematch');
    await black.getByRole('button', { name: 'Accept rematch' }).click();
    // Both players land in the new game, colours swapped.
    for (const page of [white, black]) {
      await page.waitForURL((url) => url.pathname.startsWith('/games/') && !url.pathname.endsWith(game.id));
    }
    await white.getByText('You play black').waitFor();
    await black.getByText('You play white').waitFor();
    const newId = new URL(black.url()).pathname.split('/').pop();
    assert.equal((await state(game.id)).rematch, newId);
    // The watcher stays on the finished game and is only told.
    await watcher.reload();
    await watcher.getByText('The rematch was agreed.').waitFor();
    assert.ok(watcher.url().endsWith(game.id));
    assert.equal(await watcher.getByRole('button', { name: 'Go to the rematch' }).count(), 0);
    // The new seats play.
    await black.getByText('Your move.').waitFor();
    await clickMove(black, 'd2d4');
    await expectPiece(white, 'd4', 'wP');
    assert.deepEqual((await state(newId)).moves, ['d2d4']);
  });

  test('a game nobody joined has no rematch offer: Rematch starts a new game', { timeout: 120_000 }, async () => {
    const created = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white', visibility: 'private' },
    });
    const page = await seatedPage(created.game.id, created.seat);
    await page.getByRole('button', { name: 'Cancel game' }).click();
    await page.locator('.banner-headline').getByText('Game aborted').waitFor();
    await page.getByRole('button', { name: 'Rematch', exact: true }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(created.game.id));
    await page.getByText('You play black').waitFor();
    assert.match(await page.locator('#invite-link').inputValue(), /#invite=[0-9a-f]{64}$/);
  });

  test('a rematch against the computer starts at once', { timeout: 120_000 }, async () => {
    const created = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'ai', level: 1 } },
    });
    const page = await seatedPage(created.game.id, created.seat);
    await api(suite.url, 'POST', `/api/games/${created.game.id}/resign`, { token: created.seat.token });
    await page.locator('.banner-headline').getByText('Black wins').waitFor();
    await page.getByRole('button', { name: 'Rematch', exact: true }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(created.game.id));
    await page.getByText('You play black').waitFor();
    const newId = new URL(page.url()).pathname.split('/').pop();
    await waitUntil(async () => (await state(newId)).moves.length === 1, { what: 'the computer to open' });
    assert.equal((await state(newId)).white.kind, 'ai');
  });
});
