// Browser tests of the web client's play features (issue 11): pass and
// play, premoves, move animation, sounds and mute, the low-time warning,
// the WebSocket heartbeat and the reconnect on a visible tab, and polish
// (arrow keys after a board click, `f`, remembered orientation, dark mode,
// phone layout, bad game URLs, board cues and touch taps). Real
// rookery-server, real headless Chromium; every test fails on console
// errors.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  api, boardPieces, browserSuite, clickMove, expectPiece, fenPieces, friendGame as createFriendGame, openPage, screenshot, seatIn,
  waitUntil,
} from './harness.mjs';

const suite = browserSuite();

const newContext = (options) => suite.newContext(options);

async function seatedContext(gameId, seat, options) {
  return seatIn(await newContext(options), gameId, seat);
}

const friendGame = (body) => createFriendGame(suite.url, body);

// Records the sounds the page plays (the `rookery:sound` events) and the
// Web Audio oscillators it starts, so a test sees both the intent and the
// audio graph really being driven.
async function recordSounds(context) {
  await context.addInitScript(() => {
    window.playedSounds = [];
    window.startedTones = 0;
    window.addEventListener('rookery:sound', (event) => window.playedSounds.push(event.detail));
    const start = OscillatorNode.prototype.start;
    OscillatorNode.prototype.start = function patched(...args) {
      window.startedTones += 1;
      return start.apply(this, args);
    };
  });
}

const move = (game, uci, seat) => api(suite.url, 'POST', `/api/games/${game.id}/move`, { body: { uci }, token: seat.token });
const state = (id) => api(suite.url, 'GET', `/api/games/${id}`);
const topLeft = (page) => page.locator('.board [data-square]').first().getAttribute('data-square');

// A TCP relay between the browser and the server that can go silent: its
// connections stay open but carry nothing more either way, which is what a
// half-open socket looks like to both ends. New connections still pass.
async function startRelay(target) {
  const { hostname, port } = new URL(target);
  const pairs = new Set();
  let refusing = false;
  const relay = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    const pair = { client, upstream, frozen: false, first: true };
    pairs.add(pair);
    client.on('data', (data) => {
      // While upgrades are refused, a connection that opens with a
      // WebSocket handshake is cut: only plain HTTP gets through.
      if (pair.first && refusing && /^upgrade:\s*websocket/im.test(data.toString('latin1'))) {
        client.destroy();
        upstream.destroy();
        return;
      }
      pair.first = false;
      if (!pair.frozen) upstream.write(data);
    });
    upstream.on('data', (data) => { if (!pair.frozen) client.write(data); });
    const end = () => { client.destroy(); upstream.destroy(); pairs.delete(pair); };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise((done) => relay.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${relay.address().port}`,
    freeze() {
      for (const pair of pairs) pair.frozen = true;
    },
    refuseUpgrades(refuse) {
      refusing = refuse;
    },
    async close() {
      for (const pair of pairs) { pair.client.destroy(); pair.upstream.destroy(); }
      await new Promise((done) => relay.close(done));
    },
  };
}

describe('web play features in Chromium against the real server', () => {
  test('pass and play: one browser plays both sides; the board turns or not, as chosen', { timeout: 120_000 }, async () => {
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/`);
    await page.getByRole('radio', { name: 'Pass and play' }).check();
    await page.selectOption('#clock', '600+5');
    await page.getByRole('button', { name: 'Start pass and play' }).click();
    await page.waitForURL(/\/games\/[^/]+$/);
    const gameId = new URL(page.url()).pathname.split('/').pop();
    await page.getByText('Pass and play', { exact: false }).first().waitFor();
    await page.getByText('White to play.').waitFor();
    const created = await state(gameId);
    assert.equal(created.status, 'active', 'both seats are held: the game runs at once');
    assert.equal(await topLeft(page), 'a8');
    assert.equal(await page.locator('#invite-link').count(), 0, 'nobody to invite');

    await clickMove(page, 'e2e4');
    await page.getByText('Black to play.').waitFor();
    // The board turned to black, the side to move.
    await waitUntil(async () => (await topLeft(page)) === 'h1', { what: 'the board to turn to black' });
    await clickMove(page, 'e7e5');
    await page.getByText('White to play.').waitFor();
    await waitUntil(async () => (await topLeft(page)) === 'a8', { what: 'the board to turn back to white' });
    await screenshot(page, 'passplay');

    // The user keeps the board still: remembered across a reload.
    await page.getByLabel('Turn the board to the side to move').uncheck();
    await clickMove(page, 'g1f3');
    await page.getByText('Black to play.').waitFor();
    assert.equal(await topLeft(page), 'a8', 'the board stays with white at the bottom');
    await page.reload();
    await page.getByText('Black to play.').waitFor();
    assert.equal(await page.getByLabel('Turn the board to the side to move').isChecked(), false);
    assert.equal(await topLeft(page), 'a8');
    await clickMove(page, 'b8c6');
    await page.getByText('White to play.').waitFor();
    const after = await state(gameId);
    assert.deepEqual(after.moves, ['e2e4', 'e7e5', 'g1f3', 'b8c6']);
    // Both seats are this page's: both show as connected.
    await page.waitForFunction(() => document.querySelectorAll('.presence.online').length === 2);
    assert.equal(await page.locator('.player-tag', { hasText: '(you)' }).count(), 0);

    // White (to move) resigns; the rematch is pass and play again, on this
    // page, at the same clock, both seats held.
    await page.getByRole('button', { name: 'Resign' }).click();
    await page.getByRole('button', { name: 'Confirm resignation' }).click();
    await page.locator('.banner-headline').getByText('Black wins').waitFor();
    await page.getByRole('button', { name: 'Rematch' }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(gameId) && /\/games\/[^/]+$/.test(url.pathname));
    const rematchId = new URL(page.url()).pathname.split('/').pop();
    await page.getByText('White to play.').waitFor();
    const rematch = await state(rematchId);
    assert.equal(rematch.status, 'active', 'both seats are held again');
    assert.equal(rematch.clock.increment_ms, 5_000, 'the same 10+5');
    assert.ok(rematch.clock.black_ms === 600_000, JSON.stringify(rematch.clock));
    await clickMove(page, 'd2d4');
    await page.getByText('Black to play.').waitFor();
    await clickMove(page, 'd7d5');
    await page.getByText('White to play.').waitFor();
    assert.deepEqual((await state(rematchId)).moves, ['d2d4', 'd7d5']);
  });

  test('pass-and-play seats the server does not know fall back to watching', { timeout: 60_000 }, async () => {
    const game = await friendGame();
    const context = await newContext();
    await context.addInitScript(([key, value]) => {
      if (!window.sessionStorage.getItem('seeded')) {
        window.sessionStorage.setItem('seeded', '1');
        window.localStorage.setItem(key, value);
      }
    }, [`rookery:seats:${game.id}`, JSON.stringify({ white: { color: 'white', token: 'dead-white' }, black: { color: 'black', token: 'dead-black' } })]);
    const page = await openPage(context, suite.errors, `${suite.url}/games/${game.id}`);
    await page.getByText('you are watching it').waitFor({ timeout: 30_000 });
    await page.getByText('Spectating').waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    assert.equal(await page.evaluate((key) => window.localStorage.getItem(key), `rookery:seats:${game.id}`), null);
    await page.click('.board [data-square="e2"]');
    assert.equal(await page.locator('.board .selected, .board .dest').count(), 0, 'a spectator picks nothing up');
    // The refused upgrades are reported by the browser; nothing else may be.
    const expected = /WebSocket connection to .* failed|Failed to load resource/;
    for (let index = suite.errors.length - 1; index >= 0; index--) if (expected.test(suite.errors[index])) suite.errors.splice(index, 1);
  });

  test('premoves: queued, shown, cancelled, sent when the turn comes, dropped when illegal', { timeout: 120_000 }, async () => {
    const game = await friendGame();
    const page = await openPage(await seatedContext(game.id, game.white), suite.errors, `${suite.url}/games/${game.id}`);
    await page.getByText('Your move.').waitFor();
    await clickMove(page, 'e2e4');
    await page.getByText('Waiting for your opponent to move.').waitFor();

    // Queue Nf3 while black thinks: both squares are highlighted.
    await clickMove(page, 'g1f3');
    await page.waitForSelector('.board [data-square="g1"].premove');
    await page.waitForSelector('.board [data-square="f3"].premove');
    assert.equal((await state(game.id)).moves.length, 1, 'nothing sent before the turn');
    // Escape cancels it.
    await page.keyboard.press('Escape');
    await page.waitForSelector('.board .premove', { state: 'detached' });
    // A right-click cancels it.
    await clickMove(page, 'g1f3');
    await page.waitForSelector('.board .premove');
    await page.click('.board [data-square="a4"]', { button: 'right' });
    await page.waitForSelector('.board .premove', { state: 'detached' });
    // A click on an empty square of the board cancels it.
    await clickMove(page, 'g1f3');
    await page.waitForSelector('.board .premove');
    await page.click('.board [data-square="a5"]');
    await page.waitForSelector('.board .premove', { state: 'detached' });
    // A click elsewhere on the page cancels it.
    await clickMove(page, 'g1f3');
    await page.waitForSelector('.board .premove');
    await page.locator('.game-meta').click();
    await page.waitForSelector('.board .premove', { state: 'detached' });

    // Queued again, it is sent as soon as black has moved.
    await clickMove(page, 'g1f3');
    await page.waitForSelector('.board .premove');
    await move(game, 'd7d5', game.black);
    await waitUntil(async () => (await state(game.id)).moves.length === 3, { what: 'the premove to be played' });
    assert.deepEqual((await state(game.id)).moves, ['e2e4', 'd7d5', 'g1f3']);
    await expectPiece(page, 'f3', 'wN');
    assert.equal(await page.locator('.board .premove').count(), 0);

    // A premove that black's reply makes illegal is dropped, with a word.
    await move(game, 'c7c6', game.black);
    await page.getByText('Your move.').waitFor();
    await clickMove(page, 'e4e5');
    await page.getByText('Waiting for your opponent to move.').waitFor();
    // exd6 is legal only as en passant right after ...d7-d5 (long gone):
    // offered as a premove, illegal once black plays anything.
    await clickMove(page, 'e5d6');
    await page.waitForSelector('.board [data-square="d6"].premove');
    await move(game, 'h7h6', game.black);
    await page.getByText('Your premove was not legal').waitFor();
    assert.equal(await page.locator('.board .premove').count(), 0);
    const now = await state(game.id);
    assert.equal(now.turn, 'white', 'the dropped premove was not sent');
    assert.deepEqual(now.moves.slice(-1), ['h7h6']);
  });

  test('an opponent move slides in; prefers-reduced-motion turns the animation off', { timeout: 60_000 }, async () => {
    for (const reducedMotion of ['no-preference', 'reduce']) {
      const game = await friendGame();
      const context = await seatedContext(game.id, game.white, { reducedMotion });
      const page = await openPage(context, suite.errors, `${suite.url}/games/${game.id}`);
      await page.getByText('Your move.').waitFor();
      const count = () => page.locator('.board').evaluate((board) => Number(board.dataset.animations || 0));
      const before = await count();
      await move(game, 'e2e4', game.white);
      await expectPiece(page, 'e4', 'wP');
      await move(game, 'e7e5', game.black);
      await expectPiece(page, 'e5', 'bP');
      const animated = (await count()) - before;
      if (reducedMotion === 'reduce') assert.equal(animated, 0, 'no animation with reduced motion');
      else assert.equal(animated, 2, 'each of the two moves slid in');
      // Going back in the history is a jump, not a slide.
      await page.keyboard.press('Home');
      await expectPiece(page, 'e2', 'wP');
      assert.equal((await count()) - before, animated);
    }
  });

  test('sounds for move, capture, check and the end, with the audio graph driven', { timeout: 60_000 }, async () => {
    const game = await friendGame();
    const context = await seatedContext(game.id, game.black);
    await recordSounds(context);
    const page = await openPage(context, suite.errors, `${suite.url}/games/${game.id}`);
    await page.getByText('Waiting for your opponent to move.').waitFor();
    const sounds = () => page.evaluate(() => window.playedSounds.slice());
    // 1. e4 d5 2. exd5 Qxd5 3. Nc3 Qe5+, then white resigns.
    await move(game, 'e2e4', game.white);
    await expectPiece(page, 'e4', 'wP');
    await clickMove(page, 'd7d5');
    await expectPiece(page, 'd5', 'bP');
    await move(game, 'e4d5', game.white);
    await expectPiece(page, 'd5', 'wP');
    await clickMove(page, 'd8d5');
    await expectPiece(page, 'd5', 'bQ');
    await move(game, 'b1c3', game.white);
    await expectPiece(page, 'c3', 'wN');
    await clickMove(page, 'd5e5');
    await page.waitForSelector('.board [data-square="e1"].check');
    await api(suite.url, 'POST', `/api/games/${game.id}/resign`, { token: game.white.token });
    await page.locator('.banner-headline').getByText('Black wins').waitFor();
    await waitUntil(async () => (await sounds()).length >= 7, { what: 'seven sounds' });
    assert.deepEqual(await sounds(), ['move', 'move', 'capture', 'capture', 'move', 'check', 'end']);
    assert.ok(await page.evaluate(() => window.startedTones) >= 7, 'oscillators were started');
  });

  test('the sound toggle mutes, and stays muted after a reload', { timeout: 60_000 }, async () => {
    const game = await friendGame();
    const context = await seatedContext(game.id, game.black);
    await recordSounds(context);
    const page = await openPage(context, suite.errors, `${suite.url}/games/${game.id}`);
    const toggle = page.getByRole('button', { name: 'Sound' });
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    await page.reload();
    await page.getByText('Waiting for your opponent to move.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sound' }).getAttribute('aria-pressed'), 'false');
    await move(game, 'e2e4', game.white);
    await expectPiece(page, 'e4', 'wP');
    await move(game, 'e7e5', game.black);
    await expectPiece(page, 'e5', 'bP');
    assert.deepEqual(await page.evaluate(() => window.playedSounds), []);
    assert.equal(await page.evaluate(() => window.startedTones), 0);
    // Back on: the next move is heard.
    await page.getByRole('button', { name: 'Sound' }).click();
    await move(game, 'g1f3', game.white);
    await expectPiece(page, 'f3', 'wN');
    await waitUntil(async () => (await page.evaluate(() => window.playedSounds)).includes('move'), { what: 'a move sound' });
  });

  test('low time: the threshold follows the time control; the clock turns low and beeps once', { timeout: 60_000 }, async () => {
    const created = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white', clock: { initial: 4, increment: 0 } },
    });
    const context = await seatedContext(created.game.id, created.seat);
    await recordSounds(context);
    const page = await openPage(context, suite.errors, `${suite.url}/games/${created.game.id}`);
    await page.getByText('Live', { exact: true }).waitFor();
    // The rule, as the page computes it (docs/API.md, "Web client").
    const rule = await page.evaluate(async () => {
      const { lowTimeThresholdMs } = await import('/lowtime.js');
      return [60, 180, 300, 1800, 4, 15].map((seconds) => lowTimeThresholdMs(seconds * 1000));
    });
    assert.deepEqual(rule, [10_000, 18_000, 30_000, 180_000, 2_000, 7_500]);
    // White's clock starts once each side has made its first move; the
    // page is already live, so it sees the clock run below 2 s whatever the
    // machine's speed.
    const joined = await api(suite.url, 'POST', `/api/games/${created.game.id}/join`);
    await clickMove(page, 'e2e4');
    await expectPiece(page, 'e4', 'wP');
    await move({ id: created.game.id }, 'e7e5', joined.seat);
    await page.locator('.banner-headline').getByText('Black wins').waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('[data-clock="white"]').textContent(), '0:00.0');
    assert.equal(await page.locator('[data-clock="white"].low').count(), 1);
    const sounds = await page.evaluate(() => window.playedSounds);
    assert.equal(sounds.filter((name) => name === 'lowtime').length, 1, `sounds: ${sounds}`);
    assert.equal(sounds.at(-1), 'end');
  });

  test('heartbeat: a silent socket is noticed, the game followed over HTTP, and the socket replaced', { timeout: 90_000 }, async () => {
    const relay = await startRelay(suite.url);
    try {
      const game = await friendGame();
      const page = await openPage(await seatedContext(game.id, game.white), suite.errors, `${relay.url}/games/${game.id}`);
      const sockets = [];
      page.on('websocket', (ws) => sockets.push(ws));
      await page.getByText('Live', { exact: true }).waitFor();
      await clickMove(page, 'e2e4');
      await expectPiece(page, 'e4', 'wP');
      // The connection goes silent without closing: no close event ever
      // comes. No new WebSocket can be opened either, so the opponent's
      // move can only arrive by the HTTP fallback.
      relay.freeze();
      relay.refuseUpgrades(true);
      const polls = [];
      page.on('request', (request) => {
        if (request.method() === 'GET' && new URL(request.url()).pathname === `/api/games/${game.id}`) polls.push(request.url());
      });
      await move(game, 'e7e5', game.black);
      await page.getByText('Connection lost, reconnecting…').waitFor({ timeout: 30_000 });
      await expectPiece(page, 'e5', 'bP', 30_000);
      assert.ok(polls.length >= 1, 'the game was read over HTTP');
      // Upgrades pass again: the page goes back to a live socket.
      relay.refuseUpgrades(false);
      await page.getByText('Live', { exact: true }).waitFor({ timeout: 30_000 });
      assert.ok(sockets.length >= 1, 'a new WebSocket was opened');
      await clickMove(page, 'g1f3');
      await waitUntil(async () => (await state(game.id)).moves.length === 3, { what: 'a move over the new socket' });
      // A reconnection tried while the relay refused upgrades was cut on
      // purpose, and Chromium logs each such socket as a console error
      // (whether one falls in that window depends on the machine's pace).
      const refused = `console error: WebSocket connection to '${relay.url.replace(/^http/, 'ws')}/ws/games/${game.id}' failed`;
      for (let index = suite.errors.length - 1; index >= 0; index--) {
        if (suite.errors[index].includes(refused)) suite.errors.splice(index, 1);
      }
    } finally {
      for (const context of suite.contexts) await context.close();
      suite.contexts = [];
      await relay.close();
    }
  });

  test('a tab becoming visible again probes its socket and replaces a dead one at once', { timeout: 60_000 }, async () => {
    const relay = await startRelay(suite.url);
    try {
      const game = await friendGame();
      const page = await openPage(await seatedContext(game.id, game.white), suite.errors, `${relay.url}/games/${game.id}`);
      await page.getByText('Live', { exact: true }).waitFor();
      const sockets = [];
      page.on('websocket', (ws) => sockets.push(ws));
      relay.freeze();
      await move(game, 'e2e4', game.white);
      await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
      // The probe gives the socket 3 s; the heartbeat alone would wait 12 s
      // of silence, so a new socket within 9 s is the visibility path.
      await waitUntil(() => sockets.length >= 1, { timeout: 9_000, what: 'a new WebSocket after the tab became visible' });
      await expectPiece(page, 'e4', 'wP');
      await page.getByText('Live', { exact: true }).waitFor();
    } finally {
      for (const context of suite.contexts) await context.close();
      suite.contexts = [];
      await relay.close();
    }
  });

  test('arrow keys step the moves after a board click; f flips, remembered', { timeout: 60_000 }, async () => {
    const game = await friendGame();
    for (const [uci, seat] of [['e2e4', game.white], ['e7e5', game.black], ['g1f3', game.white]]) await move(game, uci, seat);
    const page = await openPage(await seatedContext(game.id, game.black), suite.errors, `${suite.url}/games/${game.id}`);
    await page.getByText('Your move.').waitFor();
    await page.click('.board [data-square="a7"]');
    await page.click('.board [data-square="a3"]');
    await page.keyboard.press('ArrowLeft');
    await page.waitForSelector('.moves [data-ply="2"].current');
    await expectPiece(page, 'g1', 'wN');
    await page.keyboard.press('ArrowLeft');
    await page.waitForSelector('.moves [data-ply="1"].current');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expectPiece(page, 'f3', 'wN');
    // Black's view: h1 top-left. `f` flips, and the choice survives a reload.
    assert.equal(await topLeft(page), 'h1');
    await page.keyboard.press('f');
    assert.equal(await topLeft(page), 'a8');
    await page.reload();
    await page.getByText('Your move.').waitFor();
    assert.equal(await topLeft(page), 'a8');
    await page.getByRole('button', { name: 'Flip board' }).click();
    assert.equal(await topLeft(page), 'h1');
  });

  test('dark mode follows prefers-color-scheme', { timeout: 60_000 }, async () => {
    const colors = {};
    for (const colorScheme of ['light', 'dark']) {
      const page = await openPage(await newContext({ colorScheme }), suite.errors, `${suite.url}/`);
      await page.getByRole('button', { name: 'Create game and get link' }).waitFor();
      colors[colorScheme] = await page.evaluate(() => {
        const luminance = (css) => {
          const [r, g, b] = css.match(/\d+/g).map(Number);
          return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        };
        return {
          background: luminance(getComputedStyle(document.documentElement).backgroundColor),
          text: luminance(getComputedStyle(document.body).color),
          card: luminance(getComputedStyle(document.querySelector('.card')).backgroundColor),
        };
      });
      await screenshot(page, `lobby-${colorScheme}`);
    }
    const game = await friendGame();
    const dark = await openPage(await seatedContext(game.id, game.white, { colorScheme: 'dark' }), suite.errors, `${suite.url}/games/${game.id}`);
    await dark.getByText('Your move.').waitFor();
    await screenshot(dark, 'game-dark');
    assert.ok(colors.light.background > 200 && colors.light.text < 80, JSON.stringify(colors.light));
    assert.ok(colors.dark.background < 50 && colors.dark.card < 60 && colors.dark.text > 180, JSON.stringify(colors.dark));
  });

  test('phone: the game buttons come before the move list and within the first screen', { timeout: 60_000 }, async () => {
    const game = await friendGame();
    const opening = ['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1c4', 'f8c5', 'd2d3', 'd7d6', 'b1c3', 'g8f6', 'e1g1', 'e8g8', 'h2h3', 'h7h6', 'a2a3', 'a7a6'];
    for (const [index, uci] of opening.entries()) await move(game, uci, index % 2 === 0 ? game.white : game.black);
    const context = await seatedContext(game.id, game.white, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await openPage(context, suite.errors, `${suite.url}/games/${game.id}`);
    await page.waitForSelector('.moves [data-ply="16"]');
    const resign = await page.getByRole('button', { name: 'Resign' }).boundingBox();
    const moves = await page.locator('.moves-box').boundingBox();
    assert.ok(resign.y + resign.height <= moves.y, `Resign ${JSON.stringify(resign)} is above the moves ${JSON.stringify(moves)}`);
    assert.ok(resign.y + resign.height <= 844, `Resign ${JSON.stringify(resign)} is on the first screen`);
    await screenshot(page, 'game-phone-buttons');
  });

  test('a malformed or unknown game address shows an error page, not "Loading…"', { timeout: 60_000 }, async () => {
    const cases = [
      ['/games/not-a-uuid', 'Game not found'],
      ['/games/00000000-0000-4000-8000-000000000000', 'Game not found'],
      ['/games/%E0%A4%A', 'Game not found'],
    ];
    for (const [path, heading] of cases) {
      const page = await openPage(await newContext(), suite.errors, `${suite.url}${path}`);
      await page.getByRole('heading', { name: heading }).waitFor();
      assert.equal(await page.locator('.loading').count(), 0, path);
      await page.getByRole('link', { name: 'Start a new game' }).waitFor();
    }
    // The browser reports the 404 answers of the game reads; those are expected.
    const expected = /status of 404/;
    for (let index = suite.errors.length - 1; index >= 0; index--) if (expected.test(suite.errors[index])) suite.errors.splice(index, 1);
  });

  test('a module that fails to load: the page reloads once by itself, then says so with a Reload', { timeout: 60_000 }, async () => {
    // Once: the page's first load loses sound.js (as a network change
    // loses every request in flight); the reload gets it, and the lobby
    // comes up with nothing to click.
    const context = await newContext();
    let failures = 1;
    let fetched = 0;
    await context.route('**/sound.js', (route) => {
      fetched += 1;
      if (failures > 0) {
        failures -= 1;
        return route.abort('internetdisconnected');
      }
      return route.continue();
    });
    const page = await openPage(context, suite.errors, `${suite.url}/`);
    await page.locator('#app').getByRole('heading').first().waitFor();
    assert.equal(await page.locator('.load-failed').count(), 0);
    assert.equal(fetched, 2, 'sound.js asked for twice: the failed load and the reload');

    // Always: after its one reload the page says what happened and offers
    // a Reload, in the page's language, instead of "Loading…" for ever.
    const broken = await newContext({ locale: 'de-DE' });
    await broken.route('**/sound.js', (route) => route.abort('internetdisconnected'));
    const stuck = await openPage(broken, suite.errors, `${suite.url}/watch`);
    const note = stuck.locator('.load-failed[role="alert"]');
    await note.getByText('Die Seite konnte nicht geladen werden').waitFor();
    assert.equal(await stuck.locator('.loading').count(), 0);
    await broken.unroute('**/sound.js');
    await note.getByRole('button', { name: 'Neu laden' }).click();
    await stuck.locator('.site-nav a[aria-current="page"]').waitFor();
    assert.equal(await stuck.locator('.load-failed').count(), 0);
    // Chromium logs each aborted fetch and the module that could not run.
    const expected = /ERR_INTERNET_DISCONNECTED|Failed to load module script|Failed to fetch dynamically/;
    for (let index = suite.errors.length - 1; index >= 0; index--) if (expected.test(suite.errors[index])) suite.errors.splice(index, 1);
  });

  test('board cues: last move, capture ring, flip, "your move" title, touch taps', { timeout: 60_000 }, async () => {
    const game = await friendGame();
    const context = await seatedContext(game.id, game.white, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await openPage(context, suite.errors, `${suite.url}/games/${game.id}`);
    await page.getByText('Your move.').waitFor();
    await page.waitForFunction(() => document.title.startsWith('● Your move'));
    // Touch taps: pick the pawn, tap its target.
    await page.tap('.board [data-square="e2"]');
    await page.waitForSelector('.board [data-square="e2"].selected');
    await page.tap('.board [data-square="e4"]');
    await expectPiece(page, 'e4', 'wP');
    await page.waitForSelector('.board [data-square="e2"].last-move');
    await page.waitForSelector('.board [data-square="e4"].last-move');
    await page.waitForFunction(() => !document.title.startsWith('● Your move'));
    await move(game, 'd7d5', game.black);
    await page.waitForSelector('.board [data-square="d5"].last-move');
    assert.equal(await page.locator('.board .last-move').count(), 2);
    await page.waitForFunction(() => document.title.startsWith('● Your move'));
    // The capture ring marks exd5 and no quiet move.
    await page.tap('.board [data-square="e4"]');
    await page.waitForSelector('.board [data-square="d5"].capture');
    await page.waitForSelector('.board [data-square="e5"].dest');
    assert.equal(await page.locator('.board .capture').count(), 1);
    assert.match(await page.locator('.board [data-square="d5"]').getAttribute('aria-label'), /capture/);
    await page.tap('.board [data-square="d5"]');
    await expectPiece(page, 'd5', 'wP');
    const now = await state(game.id);
    assert.deepEqual(await boardPieces(page), fenPieces(now.fen));
    // Flip: the board turns and the squares follow.
    assert.equal(await topLeft(page), 'a8');
    await page.getByRole('button', { name: 'Flip board' }).tap();
    assert.equal(await topLeft(page), 'h1');
    assert.deepEqual(await boardPieces(page), fenPieces(now.fen));
  });
});
