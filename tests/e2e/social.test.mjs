// A community that keeps itself clean (issue 37), in real Chromium against
// the real server: following from a player page and seeing it in the
// lobby; chat over the game's WebSocket in two rooms, with no chat request
// over HTTP at all (the 2 s polling is gone) and its delivery time
// measured; blocking from a player page (the blocked player's line is
// refused on the spot, and so is their challenge); a report filed from a
// player page; the moderator's queue (the role granted by the binary's
// `admin grant`), a warning, the audit log, and the warned person's
// notice; the account page's lists and "who may challenge me".

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { browserSuite, openPage, screenshot, waitUntil } from './harness.mjs';

const suite = browserSuite();

const person = (name, options) => suite.person(name, options);

async function accountGame(white, black, blackName) {
  const sent = await white.request.post(`${suite.url}/api/challenge/${blackName}`, {
    form: { color: 'white', 'clock.limit': '600', 'clock.increment': '0' },
  });
  const { id } = await sent.json();
  assert.equal((await black.request.post(`${suite.url}/api/challenge/${id}/accept`)).status(), 200);
  return id;
}

// Every request a page makes to a game's chat over HTTP.
function chatRequests(page) {
  const seen = [];
  page.on('request', (request) => {
    if (/\/api\/(board|bot)\/game\/[^/]+\/chat$/.test(new URL(request.url()).pathname)) seen.push(request.method());
  });
  return seen;
}

async function say(page, text) {
  await page.locator('#chat-input').fill(text);
  await page.locator('#chat-input').press('Enter');
}

// Milliseconds from pressing Enter on `from` to the line shown on `to`
// (both pages read the same system clock).
async function deliveryMs(from, to, text) {
  await to.evaluate((wanted) => {
    window.chatSeenAt = null;
    const observer = new MutationObserver(() => {
      for (const line of document.querySelectorAll('.chat-line .chat-text')) {
        if (line.textContent === wanted) {
          window.chatSeenAt = Date.now();
          observer.disconnect();
        }
      }
    });
    observer.observe(document.body, { childList: true, subtree: true });
  }, text);
  await from.locator('#chat-input').fill(text);
  const sentAt = await from.evaluate(() => Date.now());
  await from.locator('#chat-input').press('Enter');
  await to.locator('.chat-line').getByText(text, { exact: true }).waitFor();
  const seenAt = await to.evaluate(() => window.chatSeenAt);
  return seenAt - sentAt;
}

describe('the community', () => {
  test('follow, chat on the socket, block, report, the moderator queue and a warning', { timeout: 180_000 }, async () => {
    const [ann, ben, cat, dan] = [await person('soc_ann'), await person('soc_ben'), await person('soc_cat'), await person('soc_dan')];
    const said = execFileSync(process.env.ROOKERY_SERVER_BIN || join(suite.server.dir, '..', 'rookery-server'),
      ['admin', 'grant', 'soc_ann', 'moderator', '--database', `sqlite://${join(suite.server.dir, 'e2e.db')}`]).toString();
    assert.equal(said.trim(), 'soc_ann is now a moderator');

    // Ben follows Cat from her page; the lobby shows her, online or not.
    const benPage = await openPage(ben, suite.errors, `${suite.url}/players/soc_cat`);
    await benPage.getByRole('button', { name: 'Follow soc_cat' }).click();
    await benPage.getByRole('button', { name: 'Unfollow soc_cat' }).waitFor();
    await benPage.goto(`${suite.url}/`);
    await benPage.locator('#following li[data-user="soc_cat"]').waitFor();

    // Chat over the socket: lines both ways, the spectators in their own
    // room, and not one chat request over HTTP.
    const id = await accountGame(ben, cat, 'soc_cat');
    const white = await openPage(ben, suite.errors);
    const black = await openPage(cat, suite.errors);
    const watcher = await openPage(dan, suite.errors);
    const asked = [white, black, watcher].map(chatRequests);
    for (const page of [white, black, watcher]) await page.goto(`${suite.url}/games/${id}`);
    await white.getByText('You play white').waitFor();
    await black.getByRole('heading', { name: 'Chat', exact: true }).waitFor();
    await watcher.getByRole('heading', { name: 'Spectators’ chat' }).waitFor();
    await say(white, 'Hello Cat, good luck!');
    await black.locator('.chat-line').getByText('Hello Cat, good luck!').waitFor();
    await say(black, 'Thanks, \u202Eyou too!');
    await white.locator('.chat-line.theirs').getByText('Thanks, you too!').waitFor();
    await say(watcher, 'Nice opening');
    await watcher.locator('.chat-line.mine').getByText('Nice opening').waitFor();
    const times = [];
    for (let n = 0; n < 5; n++) {
      times.push(await deliveryMs(n % 2 ? black : white, n % 2 ? white : black, `timing ${n}`));
    }
    console.log(`chat delivery over the socket, ms: ${times.join(', ')}`);
    assert.equal(await white.locator('.chat-line').getByText('Nice opening').count(), 0, 'players read their own room');
    assert.equal(await watcher.locator('.chat-line').getByText('Hello Cat, good luck!').count(), 0, 'spectators read theirs');
    await screenshot(black, 'social-chat');
    // Longer than the old 2 s poll: still nothing asked over HTTP.
    await new Promise((done) => setTimeout(done, 2_500));
    assert.deepEqual(asked, [[], [], []], 'no chat request over HTTP');

    // Cat blocks Ben from his page: his next line is refused where he
    // typed it, and so is his challenge.
    const catPlayer = await openPage(cat, suite.errors, `${suite.url}/players/soc_ben`);
    await catPlayer.getByRole('button', { name: 'Block soc_ben' }).click();
    await catPlayer.getByRole('button', { name: 'Unblock soc_ben' }).waitFor();
    await say(white, 'Are you there?');
    await waitUntil(async () => (await white.locator('.chat-error').textContent()).includes('you cannot chat with this player'), {
      what: 'the refusal told',
    });
    assert.equal(await white.locator('#chat-input').inputValue(), 'Are you there?', 'a refused line stays in the box');
    const challenge = await ben.request.post(`${suite.url}/api/challenge/soc_cat`, { form: {} });
    assert.equal(challenge.status(), 400);
    assert.equal((await challenge.json()).error, 'You cannot challenge soc_cat.');

    // Cat reports Ben from his page.
    await catPlayer.getByRole('button', { name: 'Report soc_ben' }).click();
    await catPlayer.locator('#report-reason').selectOption('abuse');
    await catPlayer.locator('#report-text').fill('Rude in chat');
    await catPlayer.locator('#report-game').fill(`${suite.url}/games/${id}`);
    await catPlayer.getByRole('button', { name: 'Send report' }).click();
    await catPlayer.locator('#report-sent').getByText('Thank you').waitFor();

    // Ann, a moderator, warns Ben from the queue: the report leaves it,
    // the log says so, Ben is told on his next page.
    const mod = await openPage(ann, suite.errors, `${suite.url}/mod`);
    const report = mod.locator('li.report[data-suspect="soc_ben"]');
    await report.getByText('Rude in chat').waitFor();
    await report.locator('.warn-text').fill('Please keep the chat friendly.');
    await report.getByRole('button', { name: 'Warn' }).click();
    await mod.getByText('No open reports.').waitFor();
    await mod.locator('.mod-log tr[data-action="warn"]').getByText('soc_ben').waitFor();
    await screenshot(mod, 'social-moderation');
    await white.goto(`${suite.url}/`);
    const notice = white.locator('.notice');
    await notice.getByText('Please keep the chat friendly.').waitFor();
    await notice.getByRole('button', { name: 'Dismiss' }).click();
    await white.reload();
    await white.locator('#new-game-title').waitFor();
    assert.equal(await white.locator('.notice').count(), 0, 'dismissed for good');

    // A person who is not a moderator is told the page is not theirs.
    const notMod = await openPage(dan, suite.errors, `${suite.url}/mod`);
    await notMod.getByText('Only moderators see this page.').waitFor();

    // Cat's account page: the blocked list, and who may challenge her.
    const account = await openPage(cat, suite.errors, `${suite.url}/account`);
    await account.locator('#blocking-list').getByRole('link', { name: 'soc_ben' }).waitFor();
    await account.locator('#policy-select').selectOption('nobody');
    await account.getByText('Saved: nobody may challenge you.').waitFor();
    const refused = await dan.request.post(`${suite.url}/api/challenge/soc_cat`, { form: {} });
    assert.equal((await refused.json()).error, 'soc_cat does not accept challenges.');
    await account.getByRole('button', { name: 'Unblock soc_ben' }).click();
    await account.locator('#blocking-list').getByText('You block nobody.').waitFor();
  });
});
