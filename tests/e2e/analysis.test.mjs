// After the game (issue 11), in real Chromium against the real server:
// analysis (graph, marks, ACPL, progress), copy FEN / PGN, piece info, and
// PGN import. Fails on any console error.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, browserSuite, openPage, screenshot, waitUntil } from './harness.mjs';

// A small, fixed search budget per position: quick and deterministic.
process.env.ROOKERY_ANALYSIS_NODES = '20000';

const SCHOLARS_MATE = ['e2e4', 'e7e5', 'd1h5', 'b8c6', 'f1c4', 'g8f6', 'h5f7'];

const suite = browserSuite({ viewport: { width: 1280, height: 1000 }, permissions: ['clipboard-read', 'clipboard-write'] });

const newContext = (options) => suite.newContext(options);

async function finishedGame(moves) {
  const created = await api(suite.url, 'POST', '/api/games', {
    body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white' },
  });
  const id = created.game.id;
  const joined = await api(suite.url, 'POST', `/api/games/${id}/join`);
  for (const [index, uci] of moves.entries()) {
    const token = index % 2 === 0 ? created.seat.token : joined.seat.token;
    await api(suite.url, 'POST', `/api/games/${id}/move`, { body: { uci }, token });
  }
  return id;
}

describe('after the game, in Chromium', () => {
  test('a finished game is analysed: graph, marks, ACPL, jump by the graph', { timeout: 180_000 }, async () => {
    const id = await finishedGame(SCHOLARS_MATE);
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/games/${id}`);
    // No move animation: the screenshot below shows a settled board.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.getByRole('button', { name: 'Analyse with the engine' }).click();
    await page.waitForSelector('.acpl:has-text("Average centipawn loss")', { timeout: 120_000 });
    // The blunder 3... Nf6?? is marked, with the better move in its title.
    const blunder = page.locator('.moves [data-ply="6"]');
    assert.equal(await blunder.locator('.judgement').textContent(), '??');
    assert.match(await blunder.getAttribute('title'), /^blunder: \S+ was best/);
    assert.equal(await page.locator('.eval-svg .eval-mark.blunder').count(), 1);
    // A click on the graph's left edge jumps to the start.
    const graph = page.locator('.eval-svg');
    const box = await graph.boundingBox();
    await page.mouse.click(box.x + 2, box.y + box.height / 2);
    await waitUntil(async () => /Viewing the start position/.test(await page.locator('.status').textContent()), { what: 'the jump to the start' });
    // Clicking the blunder shows the advice.
    await blunder.click();
    await waitUntil(async () => /Nf6 is a blunder: .+ was best/.test(await page.locator('.advice').textContent()), { what: 'the advice' });
    // The move list keeps its room beside the analysis (it once shrank to a
    // sliver): every move row is visible.
    const list = await page.locator('.moves-box').boundingBox();
    assert.ok(list.height >= 90, `move list ${list.height} px high`);
    await screenshot(page, 'analysis');
    // Copy PGN copies the annotated PGN; copy FEN the shown position.
    await page.getByRole('button', { name: 'Copy PGN' }).click();
    await waitUntil(async () => /\[%eval/.test(await page.evaluate(() => navigator.clipboard.readText())), { what: 'the PGN in the clipboard' });
    await page.getByRole('button', { name: 'Copy FEN' }).click();
    await waitUntil(async () => (await page.evaluate(() => navigator.clipboard.readText())).startsWith('r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w'), { what: 'the FEN in the clipboard' });
    // Piece info: what the piece is and how many times it moved.
    await page.goto(`${suite.url}/games/${id}`);
    await page.waitForSelector('.board [data-square="f7"][title]');
    assert.equal(await page.locator('.board [data-square="f7"]').getAttribute('title'), 'White queen on f7, moved 2 times');
    assert.equal(await page.locator('.board [data-square="e1"]').getAttribute('title'), 'White king on e1, moved 0 times');
  });

  test('a long press on a piece tells what it is and how often it moved; a short tap does not', { timeout: 60_000 }, async () => {
    const id = await finishedGame(SCHOLARS_MATE);
    const context = await newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await openPage(context, suite.errors, `${suite.url}/games/${id}`);
    await page.waitForSelector('.board [data-square="f7"][title]');
    const flash = page.locator('.flash');
    const e1 = page.locator('.board [data-square="e1"]');
    await e1.dispatchEvent('touchstart');
    await e1.dispatchEvent('touchend');
    await page.waitForTimeout(800);
    assert.equal(await flash.textContent(), '', 'a tap is not a long press');
    await page.locator('.board [data-square="f7"]').dispatchEvent('touchstart');
    await waitUntil(async () => (await flash.textContent()) === 'White queen on f7, moved 2 times', { what: 'the piece info of a long press' });
  });

  test('a pasted PGN is replayed, a bad one explained, and continued against the computer', { timeout: 120_000 }, async () => {
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/`);
    await page.locator('#pgn-text').fill('1. e4 e5 2. Ke3 *');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await waitUntil(async () => /move 2\. Ke3/.test(await page.locator('.import .form-error').textContent()), { what: 'the PGN error' });
    // Chromium logs the refused request (the documented 400) as a console
    // error: that one, and only that one, is expected.
    const refused = suite.errors.filter((line) => /status of 400 \(Bad Request\)/.test(line));
    assert.equal(refused.length, 1, suite.errors.join('\n'));
    suite.errors.splice(suite.errors.indexOf(refused[0]), 1);
    await page.locator('#pgn-text').fill('[White "alice"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 *');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.waitForSelector('.import-ply:has-text("After 3. Bb5")');
    await page.getByRole('button', { name: 'Previous imported move' }).click();
    await page.waitForSelector('.import-ply:has-text("After 2… Nc6")');
    assert.equal(await page.locator('.import-board [data-square="c6"] [data-piece="bN"]').count(), 1);
    assert.equal(await page.locator('.import-board [data-square="b5"] [data-piece]').count(), 0);
    await page.getByRole('button', { name: 'Continue as black v computer' }).click();
    await page.waitForURL(/\/games\/[^/]+$/);
    await page.waitForSelector('.board [data-square="b5"] [data-piece="wB"]');
    // The imported moves are the new game's first moves (issue 22), and
    // continuing an imported game is casual.
    assert.equal(await page.locator('.moves [data-ply="5"]').textContent(), 'Bb5');
    assert.match(await page.locator('.game-meta').textContent(), /Casual/);
  });

  test('a PGN file is read into the import card, replayed, and continued with a friend', { timeout: 120_000 }, async () => {
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/`);
    const pgn = '[Event "file"]\n\n1. d4 d5 2. c4 *\n';
    await page.getByLabel('PGN file').setInputFiles({ name: 'game.pgn', mimeType: 'application/x-chess-pgn', buffer: Buffer.from(pgn) });
    await waitUntil(async () => (await page.locator('#pgn-text').inputValue()) === pgn, { what: 'the file in the text box' });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.waitForSelector('.import-ply:has-text("After 2. c4")');
    await page.getByRole('button', { name: 'Continue with a friend' }).click();
    await page.waitForURL(/\/games\/[^/]+$/);
    // A private game with the imported moves, waiting for the friend the
    // invite link is for; the creator holds black, to move.
    await page.locator('#invite-link').waitFor();
    assert.match(await page.locator('#invite-link').inputValue(), /#invite=/);
    await page.waitForSelector('.board [data-square="c4"] [data-piece="wP"]');
    const id = new URL(page.url()).pathname.split('/').pop();
    const game = await api(suite.url, 'GET', `/api/games/${id}`);
    assert.equal(game.status, 'waiting');
    assert.equal(game.visibility, 'private');
    assert.equal(game.turn, 'black');
    assert.match(game.fen, /^rnbqkbnr\/ppp1pppp\/8\/3p4\/2PP4\/8\/PP2PPPP\/RNBQKBNR b KQkq /);
    assert.equal(game.initial_fen, 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1');
    assert.deepEqual(game.moves, ['d2d4', 'd7d5', 'c2c4']);
  });

  test('a pasted file of several games lists them; the picked one is replayed and continued', { timeout: 120_000 }, async () => {
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/`);
    const file = '[Event "Club"]\n[Date "2026.11.01"]\n[White "alice"]\n[Black "bob"]\n[Result "1-0"]\n\n'
      + '1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n'
      + '[Event "Club"]\n[Date "2026.11.02"]\n[White "carol"]\n[Black "dave"]\n[Result "*"]\n\n1. d4 d5 2. c4 *\n';
    await page.locator('#pgn-text').fill(file);
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    // The list of the file's games, the first one shown.
    const picker = page.getByLabel(/^Game \(2 in the file\)/);
    await picker.waitFor();
    const options = await picker.locator('option').allTextContents();
    assert.deepEqual(options, [
      '1. alice v bob · 2026.11.01 · 7 plies · 1-0',
      '2. carol v dave · 2026.11.02 · 3 plies · unfinished',
    ]);
    await page.waitForSelector('.import-ply:has-text("After 4. Qxf7#")');
    await page.locator('.import-result').getByText('This game is over').waitFor();
    // Picking the second: its moves, and it can be continued.
    await picker.selectOption('1');
    await page.waitForSelector('.import-ply:has-text("After 2. c4")');
    assert.match(await page.locator('.import-title').textContent(), /^carol v dave · /);
    assert.equal(await page.locator('.import-board [data-square="c4"] [data-piece="wP"]').count(), 1);
    await page.getByRole('button', { name: 'Continue with a friend' }).click();
    await page.waitForURL(/\/games\/[^/]+$/);
    const id = new URL(page.url()).pathname.split('/').pop();
    const game = await api(suite.url, 'GET', `/api/games/${id}`);
    assert.deepEqual(game.moves, ['d2d4', 'd7d5', 'c2c4']);
  });
});
