// Arena tournaments (issue 38) in real Chromium against the real server:
// two people join an arena on its page, are paired (each page goes to the
// game), one goes berserk on the game page (both pages mark it), they
// play, land back on the arena page when the game is over, and are sent to
// their next pairing from there. Fails on any console error.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, clickMove, docShot, openPage, waitUntil } from './harness.mjs';

const suite = browserSuite();
const PASSWORD = 'a long and rare phrase';

// Signs up on the sign-up page: the browser then holds the session (and
// its context's request API shares the cookie).
async function person(name) {
  const context = await suite.newContext();
  const page = await openPage(context, suite.errors, `${suite.url}/signup`);
  await page.locator('#account-name').fill(name);
  await page.locator('#account-password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.locator('#account-button').getByText(name).waitFor();
  await page.close();
  return context;
}

describe('arenas in Chromium', () => {
  test('two people join, are paired, play, and land back in the arena', { timeout: 120_000 }, async () => {
    const ann = await person('Ann');
    const bob = await person('Bob');
    const created = await ann.request.post(`${suite.url}/api/tournament`, {
      data: { name: 'Browser cup', clockTime: 3, clockIncrement: 2, minutes: 10, waitMinutes: 0 },
    });
    assert.equal(created.status(), 200);
    const arena = await created.json();
    const arenaUrl = `${suite.url}/arenas/${arena.id}`;

    const pageA = await openPage(ann, suite.errors, arenaUrl);
    const pageB = await openPage(bob, suite.errors, arenaUrl);
    await pageA.locator('h1', { hasText: 'Browser cup Arena' }).waitFor();
    await pageA.locator('[data-action="join"]').click();
    await pageA.locator('[data-action="pause"]').waitFor();
    await docShot(pageA, 'arena');
    await pageB.locator('[data-action="join"]').click();

    // Paired: both pages go to the same game.
    await pageA.waitForURL(/\/games\//, { timeout: 20_000 });
    await pageB.waitForURL(/\/games\//, { timeout: 20_000 });
    const gameId = pageA.url().split('/games/')[1];
    assert.equal(pageB.url().split('/games/')[1], gameId);
    const state = await (await ann.request.get(`${suite.url}/api/games/${gameId}`)).json();
    const [white, black] = state.white.name === 'Ann' ? [pageA, pageB] : [pageB, pageA];
    const loser = state.white.name === 'Ann' ? bob : ann;
    // The game opened some other way (a new tab, with nothing of the
    // arena's page in it) still offers berserk: the export names the arena.
    const direct = await openPage(state.white.name === 'Ann' ? bob : ann, suite.errors, `${suite.url}/games/${gameId}`);
    await direct.getByRole('button', { name: 'Berserk' }).waitFor();
    await direct.close();
    // Berserk, before one's first move: white halves their clock; both
    // pages then mark white's bar, and white's button goes.
    const whiteBerserk = white.getByRole('button', { name: 'Berserk' });
    const blackBerserk = black.getByRole('button', { name: 'Berserk' });
    await whiteBerserk.waitFor();
    await blackBerserk.waitFor();
    await whiteBerserk.click();
    await whiteBerserk.waitFor({ state: 'hidden' });
    for (const page of [white, black]) {
      await page.locator('.player-bar[data-color="white"] .berserk-mark').waitFor();
    }
    assert.equal(await black.locator('.player-bar[data-color="black"] .berserk-mark').count(), 0);
    const berserked = await (await ann.request.get(`${suite.url}/api/games/${gameId}`)).json();
    assert.deepEqual(berserked.berserk, ['white']);
    assert.equal(berserked.clock.white_ms, 90_000);
    assert.equal(berserked.clock.black_ms, 180_000);
    await docShot(white, 'arena-berserk');
    await clickMove(white, 'e2e4');
    await clickMove(black, 'e7e5');
    // Black moved without going berserk: the chance is gone.
    await blackBerserk.waitFor({ state: 'hidden' });
    await waitUntil(async () => (await (await ann.request.get(`${suite.url}/api/games/${gameId}`)).json()).moves.length === 2,
      { what: 'two moves played' });
    const resigned = await loser.request.post(`${suite.url}/api/board/game/${gameId}/resign`);
    assert.equal(resigned.status(), 200);

    // Back in the arena, then on to the next pairing.
    await pageA.waitForURL(arenaUrl, { timeout: 20_000 });
    await pageB.waitForURL(arenaUrl, { timeout: 20_000 });
    await pageA.waitForURL((url) => url.pathname.startsWith('/games/') && !url.pathname.endsWith(gameId), { timeout: 20_000 });
    await pageB.waitForURL((url) => url.pathname.startsWith('/games/') && !url.pathname.endsWith(gameId), { timeout: 20_000 });
    assert.equal(pageA.url(), pageB.url());
    const standing = await (await ann.request.get(`${suite.url}/api/tournament/${arena.id}`)).json();
    const scores = Object.fromEntries(standing.standing.players.map((p) => [p.name, p.score]));
    const winner = loser === bob ? 'Ann' : 'Bob';
    assert.equal(scores[winner], 2);
  });

  test('the lobby shows the pools with their counts', { timeout: 60_000 }, async () => {
    const context = await suite.newContext();
    const page = await openPage(context, suite.errors, `${suite.url}/`);
    await page.locator('[data-pool="5+3"] .pool-count', { hasText: 'waiting' }).waitFor();
    assert.equal(await page.locator('.pool-button[data-pool]').count(), 11);
    await page.locator('[data-pool="5+3"]').click();
    await page.locator('[data-pool="5+3"] .pool-count', { hasText: '1 waiting' }).waitFor();
    await docShot(page.locator('#pools'), 'lobby-pools');
    // A second person in the same pool: both land in one game.
    const other = await openPage(await suite.newContext(), suite.errors, `${suite.url}/`);
    await other.locator('[data-pool="5+3"] .pool-count', { hasText: '1 waiting' }).waitFor();
    await other.locator('[data-pool="5+3"]').click();
    await page.waitForURL(/\/games\//, { timeout: 20_000 });
    await other.waitForURL(/\/games\//, { timeout: 20_000 });
    assert.equal(page.url(), other.url());
  });
});
