// Ratings, the player page and records (issue 11) in real Chromium against
// the real server. Every test fails on any console error.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { api, browserSuite, openPage, screenshot, waitUntil } from './harness.mjs';

const suite = browserSuite();
const players = {};
const games = {};

const newContext = () => suite.newContext();

async function register(name) {
  const player = await api(suite.url, 'POST', '/api/players', { body: { name } });
  players[name] = player.token;
}

// A game between registered players: `white` creates, `black` joins.
async function gameBetween(white, black) {
  const created = await api(suite.url, 'POST', '/api/games', {
    body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white' },
    token: players[white],
  });
  const joined = await api(suite.url, 'POST', `/api/games/${created.game.id}/join`, { token: players[black] });
  return { id: created.game.id, seats: [created.seat.token, joined.seat.token] };
}

async function play(game, moves) {
  for (const [ply, uci] of moves.entries()) {
    await api(suite.url, 'POST', `/api/games/${game.id}/move`, { body: { uci }, token: game.seats[ply % 2] });
  }
}

const FOOLS_MATE = ['f2f3', 'e7e5', 'g2g4', 'd8h4'];
const SCHOLARS_MATE = ['e2e4', 'e7e5', 'd1h5', 'b8c6', 'f1c4', 'g8f6', 'h5f7'];

describe('ratings, player pages and records in Chromium', () => {
  before(async () => {
    await register('alice');
    await register('bob');
    // Bob mates alice in 2; alice mates bob in 4, then draws nothing more:
    // two rated results each, and an upset for alice.
    games.first = await gameBetween('alice', 'bob');
    await play(games.first, FOOLS_MATE);
    games.second = await gameBetween('alice', 'bob');
    await play(games.second, SCHOLARS_MATE);
    // Enough unfinished games that alice's list takes two pages (20 each).
    for (let i = 0; i < 20; i += 1) await gameBetween(i % 2 ? 'bob' : 'alice', i % 2 ? 'alice' : 'bob');
  });

  test('the player page shows the rating, its history as a graph, and pages through the games', { timeout: 120_000 }, async () => {
    const profile = await api(suite.url, 'GET', '/api/players/alice');
    assert.equal(profile.history.length, 2);
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/players/alice`);
    await page.locator('h1', { hasText: 'alice' }).waitFor();
    assert.equal(await page.locator('#player-rating').textContent(), `${profile.rating}${profile.provisional ? '?' : ''}`);
    assert.equal(await page.locator('#player-games-count').textContent(), '2');
    assert.equal(await page.locator('#player-wins').textContent(), '1');
    assert.equal(await page.locator('#player-losses').textContent(), '1');
    assert.equal(await page.locator('#player-streak').textContent(), '1');

    // One dot per rated game, at the rating after it; a line through the
    // start and every game.
    const graph = page.locator('svg#rating-graph');
    await graph.waitFor();
    const dots = await graph.locator('circle.dot').evaluateAll((circles) => circles.map((c) => Number(c.dataset.after)));
    assert.deepEqual(dots, profile.history.map((point) => point.after));
    const points = await graph.locator('polyline').getAttribute('points');
    assert.equal(points.trim().split(/\s+/).length, profile.history.length + 1);
    assert.match(await graph.getAttribute('aria-label'), new RegExp(`from 1500 to ${profile.history[1].after} over 2 rated games`));
    assert.deepEqual(await graph.locator('circle.dot').evaluateAll((c) => c.map((dot) => dot.classList.contains('win') ? 'win' : dot.classList.contains('loss') ? 'loss' : 'draw')), ['loss', 'win']);

    // 22 games: a first page of 20, then the older ones on request.
    const items = page.locator('#player-games .game-item');
    await waitUntil(async () => (await items.count()) === 20, { what: 'the first page of games' });
    const older = page.getByRole('button', { name: 'Older games' });
    await older.click();
    await waitUntil(async () => (await items.count()) === 22, { what: 'the second page of games' });
    await waitUntil(async () => older.isHidden(), { what: 'no more pages' });
    const listed = await items.evaluateAll((li) => li.map((item) => item.dataset.gameId));
    assert.equal(new Set(listed).size, 22, 'no game twice');
    assert.equal(listed[21], games.first.id, 'oldest last');
    await page.locator('h1').scrollIntoViewIfNeeded();
    const path = await screenshot(page, 'player-page');
    // Where a note wants the picture (artifacts/e2e/ keeps it anyway).
    if (process.env.PLAYER_SCREENSHOT) copyFileSync(path, process.env.PLAYER_SCREENSHOT);
  });

  test('the scoreboard shows ratings and records and links to player pages', { timeout: 60_000 }, async () => {
    const board = await api(suite.url, 'GET', '/api/scoreboard');
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/scoreboard`);
    const bob = board.players.find((p) => p.name === 'bob');
    const row = page.locator('.score-table tr', { hasText: 'bob' }).first();
    await row.waitFor();
    assert.deepEqual(await row.locator('th, td').allTextContents(),
      ['bob', '2', '1', '1', '0', `${bob.rating}${bob.provisional ? '?' : ''}`]);

    const records = page.locator('#records');
    await records.waitFor();
    const mate = records.locator('tr[data-record="fastest_checkmate"]');
    assert.deepEqual(await mate.locator('th, td').allTextContents(), ['Fastest checkmate', 'bob', '2 moves', 'alice', 'View']);
    const upset = board.records.find((r) => r.record === 'biggest_upset');
    assert.deepEqual(await records.locator('tr[data-record="biggest_upset"] td').allTextContents(),
      ['alice', `${upset.value} points below`, 'bob', 'View']);
    assert.equal(await records.locator('tbody tr').count(), board.records.length);
    await screenshot(page, 'scoreboard-records');

    await mate.getByRole('link', { name: 'bob' }).click();
    await page.waitForURL(`${suite.url}/players/bob`);
    await page.locator('#player-rating').waitFor();
  });

  test('the game header shows each registered player\'s rating and links to them', { timeout: 60_000 }, async () => {
    // A new game between them: the seats show today's ratings.
    const game = await gameBetween('bob', 'alice');
    const state = await api(suite.url, 'GET', `/api/games/${game.id}`);
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/games/${game.id}`);
    const bar = (color) => page.locator(`.player-bar[data-color="${color}"]`);
    await bar('white').locator('.player-name a', { hasText: 'bob' }).waitFor();
    const shown = (side) => `${side.rating}${side.provisional ? '?' : ''}`;
    await waitUntil(async () => (await bar('white').locator('.player-rating').textContent()) === shown(state.white), { what: 'white rating' });
    assert.equal(await bar('black').locator('.player-rating').textContent(), shown(state.black));
    assert.notEqual(state.white.rating, 1500, 'a rating that has moved');
    await bar('black').getByRole('link', { name: 'alice' }).click();
    await page.waitForURL(`${suite.url}/players/alice`);
    await page.locator('#rating-graph').waitFor();
  });

  test('a finished rated game shows the ratings before it and what it changed', { timeout: 60_000 }, async () => {
    const alice = await api(suite.url, 'GET', '/api/players/alice');
    const point = alice.history.find((entry) => entry.game === games.first.id);
    const change = point.after - point.before;
    assert.ok(change < 0, 'alice lost the first game');
    const page = await openPage(await newContext(), suite.errors, `${suite.url}/games/${games.first.id}`);
    const rating = (color) => page.locator(`.player-bar[data-color="${color}"] .player-rating`);
    await waitUntil(async () => (await rating('white').textContent()) === `1500? −${-change}`, { what: 'white rating change' });
    assert.equal(await rating('black').textContent(), `1500? +${-change}`);
  });

  test('the lobby links a registered player to their own page', { timeout: 60_000 }, async () => {
    const context = await newContext();
    await context.addInitScript((token) => {
      window.localStorage.setItem('rookery:player', JSON.stringify({ id: 'x', name: 'bob', token }));
    }, players.bob);
    const page = await openPage(context, suite.errors, `${suite.url}/`);
    await page.getByRole('link', { name: 'Your rating and games' }).click();
    await page.waitForURL(`${suite.url}/players/bob`);
    await page.locator('h1', { hasText: 'bob' }).waitFor();
  });
});
