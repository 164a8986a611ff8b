// Teams and Swiss tournaments in the browser (issue 39), in real Chromium
// against the real server, each person in a browser context of their own:
// a leader signs up, creates a team from /teams and a Swiss with rounds
// started by hand from the team's page; two members join the team and the
// tournament through the pages (the leader plays too: three players, so
// one has the pairing bye); the leader starts round 1 from the Swiss page;
// the two paired players find their game there and play a fool's mate;
// the standings of a spectator's Swiss page, opened before, change without
// a reload (the page's WebSocket). Then the TRF file beside the page, the
// player page's teams, the pages on a phone and on a desktop, light and
// dark.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  browserSuite, clickMove, expectPiece, openPage, screenshot, unnamedControls, waitUntil,
} from './harness.mjs';

const suite = browserSuite();
const PASSWORD = 'a long pass phrase 7';

async function signUp(name) {
  const context = await suite.newContext();
  const page = await openPage(context, suite.errors, `${suite.url}/signup`);
  await page.locator('#account-name').fill(name);
  await page.locator('#account-password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.waitForURL(`${suite.url}/`);
  await page.locator('#account-button').getByText(name).waitFor();
  return page;
}

// The standings a page shows: { name: points text }.
const standingsOf = (page) => page.$$eval('.swiss-standings tbody tr', (rows) => Object.fromEntries(
  rows.map((row) => [row.dataset.player, row.querySelector('.swiss-points').textContent])));

describe('teams and Swiss tournaments in the browser', () => {
  test('a leader’s team Swiss: members join, round 1 is started, played, and the standings move live', { timeout: 120_000 }, async () => {
    const lead = await signUp('sw_lead');

    // The header's Teams link, then a team.
    await lead.getByRole('link', { name: 'Teams', exact: true }).click();
    await lead.waitForURL(`${suite.url}/teams`);
    assert.equal(await lead.locator('.site-nav a[aria-current="page"]').textContent(), 'Teams');
    await lead.locator('#team-name').fill('Knights Club');
    await lead.locator('#team-description').fill('Tuesday evenings.\nAll welcome.');
    await lead.getByRole('button', { name: 'Create team' }).click();
    await lead.waitForURL(`${suite.url}/team/knights-club`);
    assert.equal(await lead.locator('#team-title').textContent(), 'Knights Club');
    const founder = lead.locator('#team-members [data-member="sw_lead"]');
    assert.match(await founder.textContent(), /Leader/);

    // A Swiss, its rounds started by hand.
    await lead.locator('#new-swiss-button').click();
    await lead.locator('#swiss-name').fill('Evening Swiss');
    await lead.locator('#swiss-minutes').fill('1');
    await lead.locator('#swiss-increment').fill('0');
    await lead.locator('#swiss-rounds').fill('3');
    await lead.locator('#swiss-interval').selectOption('99999999');
    await lead.getByRole('button', { name: 'Create tournament' }).click();
    await lead.waitForURL(/\/swiss\/[^/]+$/);
    const swissUrl = lead.url();
    const swissId = swissUrl.split('/').pop();
    assert.equal(await lead.locator('#swiss-title').textContent(), 'Evening Swiss');
    assert.match(await lead.locator('#swiss-meta').textContent(), /Team Knights Club · 1\+0 · rated · round 0 of 3 · 0 players · rounds started by hand/);
    await lead.locator('#swiss-live').getByText('Live').waitFor();
    await lead.locator('#swiss-join').click();
    await lead.locator('#swiss-withdraw').waitFor();

    // A spectator, not logged in, follows the page from now on.
    const watcher = await openPage(await suite.newContext(), suite.errors, swissUrl);
    await watcher.locator('#swiss-live').getByText('Live').waitFor();
    await watcher.locator('#swiss-login').waitFor();
    await watcher.evaluate(() => { window.sameDocument = true; });

    // Two members join the team, then the tournament, from the pages.
    const members = {};
    for (const name of ['sw_ann', 'sw_bob']) {
      const page = await signUp(name);
      await page.goto(`${suite.url}/team/knights-club`);
      await page.locator('#team-join').click();
      await page.locator('#team-joined').waitFor();
      await page.locator(`#team-swiss [data-swiss-id="${swissId}"]`).click();
      await page.waitForURL(swissUrl);
      await page.locator('#swiss-join').click();
      await page.locator('#swiss-withdraw').waitFor();
      members[name] = page;
    }
    // The joins reach the spectator live.
    await watcher.locator('#swiss-meta').getByText('3 players').waitFor();
    assert.match(await watcher.locator('#swiss-no-standings').textContent(), /3 players have joined/);

    // The leader starts round 1.
    await lead.locator('#swiss-start-round').getByText('Start round 1 now').click();
    const players = { sw_lead: lead, ...members };
    const games = {};
    let byeName = null;
    for (const [name, page] of Object.entries(players)) {
      await page.locator('#your-game, #your-bye').first().waitFor();
      if (await page.locator('#your-bye').count()) byeName = name;
      else games[await page.locator('#your-game').getAttribute('data-color')] = { name, page };
    }
    assert.ok(byeName && games.white && games.black, `one bye and one game: ${byeName}, ${Object.keys(games)}`);
    await watcher.locator('.swiss-pairings[data-round="1"]').waitFor();
    assert.match(await watcher.locator('#swiss-meta').textContent(), /round 1 of 3 · 3 players/);
    assert.equal(Object.keys(await standingsOf(watcher)).length, 3);
    assert.match(await watcher.locator(`.swiss-pairings [data-bye="${byeName}"]`).textContent(), /pairing bye/);
    assert.equal(await watcher.locator('.swiss-pairings .swiss-result').textContent(), 'playing');

    // The players go to their game from the Swiss page and play it out.
    for (const [color, { page }] of Object.entries(games)) {
      await page.locator('#your-game').click();
      await page.waitForURL(/\/games\//);
      await page.getByText(`You play ${color}`).waitFor();
    }
    const { white, black } = games;
    await clickMove(white.page, 'f2f3');
    await expectPiece(black.page, 'f3', 'wP');
    await clickMove(black.page, 'e7e5');
    await expectPiece(white.page, 'e5', 'bP');
    await clickMove(white.page, 'g2g4');
    await expectPiece(black.page, 'g4', 'wP');
    await clickMove(black.page, 'd8h4');
    await expectPiece(white.page, 'h4', 'bQ');

    // The spectator's standings and pairings change without a reload.
    await waitUntil(async () => (await standingsOf(watcher))[black.name] === '1', { what: 'the winner’s point on the spectator’s page' });
    const standings = await standingsOf(watcher);
    assert.deepEqual(standings, { [black.name]: '1', [byeName]: '1', [white.name]: '0' });
    assert.equal(await watcher.locator('.swiss-pairings .swiss-result').textContent(), '0–1');
    assert.equal(await watcher.evaluate(() => window.sameDocument), true, 'the page was not reloaded');
    await screenshot(watcher, 'swiss-standings');
    const lastRow = watcher.locator('.swiss-standings tbody tr').last();
    assert.equal(await lastRow.getAttribute('data-player'), white.name);
    // Every tie-break column is there.
    assert.deepEqual(await watcher.$$eval('.swiss-standings thead th', (ths) => ths.map((th) => th.title).filter(Boolean)),
      ['Rank', 'Points', 'Buchholz cut 1', 'Buchholz', 'Sonneborn-Berger', 'Wins', 'Performance']);
    // The leader may start round 2 now that round 1 is over.
    await players.sw_lead.goto(swissUrl);
    await players.sw_lead.locator('#swiss-start-round').getByText('Start round 2 now').waitFor();

    // The TRF file shares its path with the page, and both answer.
    const trfHref = await watcher.locator('#swiss-trf').getAttribute('href');
    assert.equal(trfHref, `/swiss/${swissId}.trf`);
    const trf = await fetch(`${suite.url}${trfHref}`);
    assert.equal(trf.status, 200);
    assert.match(trf.headers.get('content-type'), /^text\/plain/);
    const trfText = await trf.text();
    assert.match(trfText, /^012 Evening Swiss/m);
    assert.equal(trfText.split('\n').filter((line) => line.startsWith('001')).length, 3);
    const pageAnswer = await fetch(swissUrl);
    assert.equal(pageAnswer.status, 200);
    assert.match(pageAnswer.headers.get('content-type'), /^text\/html/);

    // A player's page lists their teams.
    await watcher.goto(`${suite.url}/players/sw_lead`);
    const team = watcher.locator('#player-teams [data-team-id="knights-club"]');
    await team.waitFor();
    assert.match(await team.textContent(), /Knights Club.*Leader.*3 members/);
  });

  test('the team pages: requests, leaders, kick; every page fits a phone and a desktop, light and dark', { timeout: 90_000 }, async () => {
    const lead = await signUp('tm_lead');
    await lead.goto(`${suite.url}/teams`);
    await lead.locator('#team-name').fill('Rooks Only');
    await lead.getByRole('radio', { name: 'By request' }).check();
    await lead.locator('#team-password').fill('castle');
    await lead.getByRole('button', { name: 'Create team' }).click();
    await lead.waitForURL(`${suite.url}/team/rooks-only`);
    assert.match(await lead.locator('#team-terms').textContent(), /1 member · joined by request · entry password/);

    // A request with a message and the password.
    const asker = await signUp('tm_ann');
    await asker.goto(`${suite.url}/team/rooks-only`);
    await asker.locator('#team-join-message').fill('I play on Tuesdays');
    await asker.locator('#team-join-password').fill('castle');
    await asker.getByRole('button', { name: 'Ask to join' }).click();
    await asker.locator('#team-requested').waitFor();

    // The leader accepts it, appoints her, takes it back, then removes her.
    await lead.reload();
    const request = lead.locator('#team-requests [data-request="tm_ann"]');
    assert.match(await request.textContent(), /I play on Tuesdays/);
    await request.getByRole('button', { name: 'Accept' }).click();
    const row = lead.locator('#team-members [data-member="tm_ann"]');
    await row.getByRole('button', { name: 'Make leader' }).click();
    await row.locator('.badge').getByText('Leader').waitFor();
    await row.getByRole('button', { name: 'Remove leadership' }).click();
    await row.getByRole('button', { name: 'Make leader' }).waitFor();
    await row.getByRole('button', { name: 'Remove', exact: true }).click();
    await row.waitFor({ state: 'detached' });

    const layouts = [
      ['desktop', { viewport: { width: 1280, height: 900 } }],
      ['phone', { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }],
    ];
    // A Swiss to show.
    await lead.locator('#new-swiss-button').click();
    await lead.getByRole('button', { name: 'Create tournament' }).click();
    await lead.waitForURL(/\/swiss\/[^/]+$/);
    const swissUrl = lead.url();
    for (const [name, options] of layouts) {
      for (const colorScheme of ['light', 'dark']) {
        const context = await suite.newContext({ ...options, colorScheme });
        const page = await openPage(context, suite.errors);
        for (const [path, drawn] of [['/teams', '#team-list .game-link'], ['/team/rooks-only', '#team-members'], [swissUrl.slice(suite.url.length), '#swiss-standings']]) {
          await page.goto(`${suite.url}${path}`);
          await page.locator(drawn).first().waitFor();
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= options.viewport.width, `${name} ${colorScheme} ${path}: ${width}px`);
          assert.deepEqual(await unnamedControls(page), [], `${name} ${colorScheme} ${path}`);
          await screenshot(page, `teams-${name}-${colorScheme}-${path.split('/')[1]}`);
        }
      }
    }
  });
});
