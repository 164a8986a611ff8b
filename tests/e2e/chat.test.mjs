// The chat on the game page (issues 24 and 37), in real Chromium against
// the real server, over the game's WebSocket: two accounts chat during a
// game (lines both ways, text never markup, the 140-character box and its
// counter, "Mute" remembered per opponent, a line beyond 10 a minute
// refused and left in the box); two named players without passwords chat
// as their seats' names; a spectator reads the spectators' room (writing
// takes an account); anonymous seat-token players and a player facing an
// anonymous opponent or the computer get no chat box; no page asks for
// chat over HTTP. The bot's chat line is in
// berserk.test.mjs. A screenshot of the chat lands in artifacts/e2e/, and
// in docs/screenshots/ with E2E_DOC_SCREENSHOTS=1.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  api, browserSuite, clickMove, docShot, expectPiece, friendGame, openPage, screenshot, seatIn, unnamedControls, waitUntil,
} from './harness.mjs';

const suite = browserSuite();

// A browser profile logged in to a new account (signed up through the
// profile's own cookie jar; the page is told of the login as it would be).
const person = (name, options) => suite.person(name, options);

// A game between two accounts, by a challenge the second accepts: its id.
async function accountGame(white, black, blackName) {
  const sent = await white.request.post(`${suite.url}/api/challenge/${blackName}`, {
    form: { color: 'white', 'clock.limit': '600', 'clock.increment': '0' },
  });
  const { id } = await sent.json();
  assert.equal((await black.request.post(`${suite.url}/api/challenge/${id}/accept`)).status(), 200);
  return id;
}

// Counts the page's requests to a game's chat.
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

const lineTexts = (page) => page.locator('.chat-line .chat-text').allTextContents();

describe('chat on the game page', () => {
  test('two accounts chat: lines both ways, text not markup, 140 characters, mute per opponent, a flood told', { timeout: 120_000 }, async () => {
    const [fay, gus] = [await person('chat_fay'), await person('chat_gus')];
    const id = await accountGame(fay, gus, 'chat_gus');
    const white = await openPage(fay, suite.errors, `${suite.url}/games/${id}`);
    const black = await openPage(gus, suite.errors, `${suite.url}/games/${id}`);
    await white.getByText('You play white').waitFor();
    await black.getByText('You play black').waitFor();
    await white.getByRole('heading', { name: 'Chat', exact: true }).waitFor();
    await black.getByText('No messages yet.').waitFor();
    assert.equal(await white.locator('.chat-counter').textContent(), '0/140');
    assert.equal(await white.getByRole('button', { name: 'Send' }).isDisabled(), true, 'nothing to send yet');

    await say(white, 'Hello Gus, good luck!');
    await black.locator('.chat-line').getByText('Hello Gus, good luck!').waitFor();
    assert.equal(await black.locator('.chat-line').first().getAttribute('data-user'), 'chat_fay');
    assert.equal(await white.locator('#chat-input').inputValue(), '', 'a sent line leaves the box');
    await say(black, 'Thanks, you too!');
    await white.locator('.chat-line.theirs').getByText('Thanks, you too!').waitFor();
    await clickMove(white, 'e2e4');
    await expectPiece(black, 'e4', 'wP');
    assert.deepEqual(await unnamedControls(black), []);
    await docShot(black.locator('.game-page'), 'chat');

    // Markup in a line stays text, on both sides.
    const markup = 'See <b>this</b> & <img src=x onerror="window.pwned=1">';
    await say(white, markup);
    await black.locator('.chat-line').filter({ hasText: 'See <b>this</b>' }).waitFor();
    assert.deepEqual(await lineTexts(black), ['Hello Gus, good luck!', 'Thanks, you too!', markup]);
    for (const page of [white, black]) {
      assert.equal(await page.locator('.chat-lines b, .chat-lines img').count(), 0);
      assert.equal(await page.evaluate(() => window.pwned), undefined);
    }

    // The box holds 140 characters, as the server counts them (an emoji is
    // one, though two UTF-16 units), and the counter says so.
    await white.locator('#chat-input').fill('🙂'.repeat(150));
    assert.equal([...await white.locator('#chat-input').inputValue()].length, 140);
    assert.equal(await white.locator('.chat-counter').textContent(), '140/140');
    await white.locator('#chat-input').press('Enter');
    await black.locator('.chat-line').nth(3).waitFor();
    assert.equal([...(await lineTexts(black))[3]].length, 140);

    // Gus mutes Fay: her lines hide, and stay hidden after a reload and for
    // her next lines; it is remembered for her name, in this browser.
    await black.getByRole('button', { name: 'Mute chat_fay' }).click();
    assert.equal(await black.getByRole('button', { name: 'Mute chat_fay' }).getAttribute('aria-pressed'), 'true');
    assert.deepEqual(await lineTexts(black), ['Thanks, you too!']);
    await black.getByText('chat_fay’s messages are hidden (3).').waitFor();
    assert.equal(await black.evaluate(() => localStorage.getItem('rookery:chat-mute:chat_fay')), 'true');
    await black.reload();
    await black.getByText('chat_fay’s messages are hidden (3).').waitFor();
    assert.equal(await black.getByRole('button', { name: 'Mute chat_fay' }).getAttribute('aria-pressed'), 'true');
    await say(white, 'Can you read me?');
    await white.locator('.chat-line').getByText('Can you read me?').waitFor();
    await black.getByText('chat_fay’s messages are hidden (4).').waitFor();
    assert.deepEqual(await lineTexts(black), ['Thanks, you too!']);
    // Fay's own page mutes nobody.
    assert.equal(await white.getByRole('button', { name: 'Mute chat_gus' }).getAttribute('aria-pressed'), 'false');
    await black.getByRole('button', { name: 'Mute chat_fay' }).click();
    await black.locator('.chat-line').getByText('Can you read me?').waitFor();
    assert.equal(await black.evaluate(() => localStorage.getItem('rookery:chat-mute:chat_fay')), null);

    // Ten lines a minute in a room: Fay has sent four; six more go through
    // lichess's route (which drops a flood with 200, as lila); the page's
    // eleventh is refused on the socket, said, and left in the box.
    for (let line = 0; line < 6; line++) {
      const answer = await fay.request.post(`${suite.url}/api/board/game/${id}/chat`, { form: { room: 'player', text: `line ${line}` } });
      assert.equal(answer.status(), 200, await answer.text());
    }
    await white.locator('.chat-line').getByText('line 5').waitFor();
    await say(white, 'One too many');
    const refusal = () => white.locator('.chat-error').textContent();
    await waitUntil(async () => (await refusal()).startsWith('Not sent: at most 10 chat lines a minute'), {
      what: 'the refused line told', timeout: 10_000,
    });
    assert.equal(await white.locator('#chat-input').inputValue(), 'One too many', 'a refused line stays in the box');
    assert.equal(await black.locator('.chat-line').getByText('One too many').count(), 0, 'no line got through');
  });

  test('named players without passwords chat with their tokens; others get no chat box', { timeout: 120_000 }, async () => {
    const ida = await api(suite.url, 'POST', '/api/players', { body: { name: 'chat_ida' } });
    const jon = await api(suite.url, 'POST', '/api/players', { body: { name: 'chat_jon' } });
    const named = async (player, options) => {
      const context = await suite.newContext(options);
      await context.addInitScript((value) => localStorage.setItem('rookery:player', value), JSON.stringify(player));
      return context;
    };
    const created = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white' }, token: ida.token,
    });
    const joined = await api(suite.url, 'POST', `/api/games/${created.game.id}/join`, { token: jon.token });
    const id = created.game.id;
    const idaPage = await openPage(await seatIn(await named(ida), id, created.seat), suite.errors, `${suite.url}/games/${id}`);
    // Jon is on a phone, in dark mode: the chat opens from the button
    // docked at the bottom of the screen (issue 36), which counts the
    // lines not yet seen, and fits the screen.
    const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'dark' };
    const jonPage = await openPage(await seatIn(await named(jon, phone), id, joined.seat), suite.errors, `${suite.url}/games/${id}`);
    await say(idaPage, 'Hi Jon');
    await jonPage.getByRole('button', { name: 'Chat (1 new)' }).click();
    await jonPage.locator('.chat-line').getByText('Hi Jon').waitFor();
    assert.equal(await jonPage.locator('.chat-toggle').textContent(), 'Chat');
    assert.equal(await jonPage.locator('.chat-line .chat-user').textContent(), 'chat_ida');
    assert.ok(await jonPage.evaluate(() => document.documentElement.scrollWidth) <= 390, 'the page fits the phone');
    const chatBox = await jonPage.locator('.chat').boundingBox();
    assert.ok(chatBox.x >= 0 && chatBox.x + chatBox.width <= 390, JSON.stringify(chatBox));
    assert.ok(chatBox.y >= 0 && chatBox.y + chatBox.height <= 844, `the chat is on the screen: ${JSON.stringify(chatBox)}`);
    assert.deepEqual(await unnamedControls(jonPage), []);
    await screenshot(jonPage, 'chat-phone-dark');

    // A spectator of that game reads the spectators' room (on the
    // socket: nothing asked over HTTP), and may not write without an
    // account.
    const spectator = await openPage(await suite.newContext(), suite.errors);
    const spectatorAsked = chatRequests(spectator);
    await spectator.goto(`${suite.url}/games/${id}`);
    await spectator.getByText('Spectating').waitFor();

    // Anonymous seat-token players: no chat.
    const anonymous = await friendGame(suite.url);
    const seated = await openPage(await seatIn(await suite.newContext(), anonymous.id, anonymous.white), suite.errors);
    const seatedAsked = chatRequests(seated);
    await seated.goto(`${suite.url}/games/${anonymous.id}`);
    await seated.getByText('You play white').waitFor();

    // A named player facing an anonymous opponent: the other side could
    // not read a chat, so there is none.
    const lone = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white' }, token: ida.token,
    });
    await api(suite.url, 'POST', `/api/games/${lone.game.id}/join`);
    const lonePage = await openPage(await seatIn(await named(ida), lone.game.id, lone.seat), suite.errors);
    const loneAsked = chatRequests(lonePage);
    await lonePage.goto(`${suite.url}/games/${lone.game.id}`);
    await lonePage.getByText('You play white').waitFor();

    // Nor against the computer.
    const ai = await api(suite.url, 'POST', '/api/games', {
      body: { white: { kind: 'human' }, black: { kind: 'ai', level: 1 } }, token: ida.token,
    });
    const aiPage = await openPage(await seatIn(await named(ida), ai.game.id, ai.seat), suite.errors);
    const aiAsked = chatRequests(aiPage);
    await aiPage.goto(`${suite.url}/games/${ai.game.id}`);
    await aiPage.getByText('You play white').waitFor();
    await clickMove(aiPage, 'e2e4');
    await expectPiece(aiPage, 'e4', 'wP');

    // Longer than the old poll: still nothing asked.
    await new Promise((done) => setTimeout(done, 2_500));
    await spectator.getByRole('heading', { name: 'Spectators’ chat' }).waitFor();
    assert.equal(await spectator.locator('.chat-line').count(), 0, 'the players’ lines stay in their room');
    await spectator.locator('.chat-login').getByText('Log in').waitFor();
    assert.deepEqual(spectatorAsked, []);
    for (const [page, asked] of [[seated, seatedAsked], [lonePage, loneAsked], [aiPage, aiAsked]]) {
      assert.equal(await page.locator('.chat').count(), 0, page.url());
      assert.deepEqual(asked, [], page.url());
    }
    await waitUntil(async () => (await jonPage.locator('.chat-line').count()) === 1, { what: 'one line' });
  });
});
