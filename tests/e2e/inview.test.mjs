// Messages that come and go, and the parts of the game page that matter
// kept in view (issue 36, point 4), in real Chromium against the real
// server, at 1280×900 and on a 390×844 phone: a takeback's notice goes with
// the next move and never shows on the result or a later visit; "You
// joined the game as black." goes when the game is aborted; "Live" is not
// shown once the game is over; a device logged out from elsewhere says
// why it shows "Log in"; an offer, the chat and the analysis never push
// each other out of sight (on the phone the offer's Accept/Decline and the
// chat are reached without scrolling under the board).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PASSWORD, api, browserSuite, clickMove, docShot, expectPiece, friendGame, openPage, screenshot, seatIn, waitUntil,
} from './harness.mjs';

const suite = browserSuite();
const SIZES = [
  { name: 'desktop', viewport: { width: 1280, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

const context = (size) => suite.newContext({ viewport: size.viewport, isMobile: !!size.isMobile, hasTouch: !!size.hasTouch });

// Whether the element is on screen where a person can use it: inside the
// window, and the topmost thing at its centre (not clipped by a scrolled
// panel, nor covered).
async function inView(locator) {
  return locator.evaluate((el) => {
    if (el.closest('[hidden]')) return false;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return false;
    if (box.top < 0 || box.left < 0 || box.bottom > window.innerHeight || box.right > window.innerWidth) return false;
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return !!hit && (hit === el || el.contains(hit));
  });
}

async function assertInView(locator, what) {
  await locator.waitFor();
  const seen = await inView(locator);
  if (!seen) await screenshot(locator.page(), `not-in-view-${what.replace(/\W+/g, '-')}`);
  assert.equal(seen, true, `${what} is in view`);
}

async function seated(size, gameId, seat) {
  const ctx = await context(size);
  if (seat) await seatIn(ctx, gameId, seat);
  return openPage(ctx, suite.errors, `${suite.url}/games/${gameId}`);
}

const act = (id, path, seat, body) => api(suite.url, 'POST', `/api/games/${id}/${path}`, { token: seat.token, body });

const person = (size, name) => suite.person(name, { viewport: size.viewport, isMobile: !!size.isMobile, hasTouch: !!size.hasTouch });

// A game between two accounts (the chat needs named players): its id.
async function accountGame(white, black, blackName) {
  const sent = await white.request.post(`${suite.url}/api/challenge/${blackName}`, {
    form: { color: 'white', 'clock.limit': '600', 'clock.increment': '0', rated: 'false' },
  });
  const { id } = await sent.json();
  assert.equal((await black.request.post(`${suite.url}/api/challenge/${id}/accept`)).status(), 200);
  return id;
}

// Takes the console lines of refused requests (`status of 401`) off the list.
async function expectRefused(status) {
  const refused = () => suite.errors.filter((line) => line.includes(`status of ${status}`));
  await waitUntil(() => refused().length >= 1, { timeout: 5_000 });
  for (let index = suite.errors.length - 1; index >= 0; index--) {
    if (suite.errors[index].includes(`status of ${status}`)) suite.errors.splice(index, 1);
  }
}

for (const size of SIZES) {
  describe(`messages that come and go (${size.name})`, () => {
    test('a takeback is told until the next move, never on the result nor a later visit', { timeout: 120_000 }, async () => {
      const game = await friendGame(suite.url);
      const white = await seated(size, game.id, game.white);
      await act(game.id, 'move', game.white, { uci: 'e2e4' });
      await act(game.id, 'move', game.black, { uci: 'e7e5' });
      await expectPiece(white, 'e5', 'bP');
      await act(game.id, 'takeback', game.white);
      await act(game.id, 'takeback', game.black);
      const notice = white.getByText('One move was taken back.');
      await notice.waitFor();
      await expectPiece(white, 'e2', 'wP');
      await act(game.id, 'move', game.white, { uci: 'd2d4' });
      await expectPiece(white, 'd4', 'wP');
      await notice.waitFor({ state: 'hidden' });
      await act(game.id, 'resign', game.black);
      await white.locator('.banner').waitFor();
      assert.equal(await white.getByText(/taken back|takebacks? in this game/).count(), 0, 'the result page does not repeat it');
      await white.reload();
      await white.locator('.banner').waitFor();
      assert.equal(await white.getByText(/taken back|takebacks? in this game/).count(), 0, 'nor a later visit');
    });

    test('"You joined the game as black." goes when the game is aborted; no "Live" after the end', { timeout: 120_000 }, async () => {
      const created = await api(suite.url, 'POST', '/api/games', {
        body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white', visibility: 'private' },
      });
      const id = created.game.id;
      const ctx = await context(size);
      const black = await openPage(ctx, suite.errors, `${suite.url}/games/${id}#invite=${created.invite}`);
      await black.getByRole('button', { name: 'Join as black' }).click();
      const joined = black.getByText('You joined the game as black.');
      await joined.waitFor();
      await black.locator('.connection.open').waitFor();
      await act(id, 'abort', created.seat);
      await black.locator('.banner').waitFor();
      await joined.waitFor({ state: 'hidden' });

      // A finished game between two people keeps its socket (for a
      // rematch), but says nothing of being live.
      const game = await friendGame(suite.url);
      const white = await seated(size, game.id, game.white);
      await white.locator('.connection.open').getByText('Live').waitFor();
      await act(game.id, 'move', game.white, { uci: 'e2e4' });
      await act(game.id, 'move', game.black, { uci: 'e7e5' });
      await act(game.id, 'resign', game.black);
      await white.locator('.banner').waitFor();
      await waitUntil(async () => (await white.locator('.connection').textContent()) === '', { what: 'no "Live" on a finished game' });
      assert.equal(await white.getByText('Live', { exact: true }).count(), 0);
      // The socket is still there: a rematch offer arrives live.
      await act(game.id, 'rematch', game.black);
      await white.getByText('Your opponent offers a rematch.').waitFor();
    });

    test('a device logged out from elsewhere says why', { timeout: 120_000 }, async () => {
      const name = `gone_${size.name}`;
      const other = await person(size, name);
      const device = await context(size);
      const login = await device.request.post(`${suite.url}/api/session`, { data: { name, password: PASSWORD } });
      assert.equal(login.status(), 200, await login.text());
      // The page is told of the login as it would be, on its first load only.
      await device.addInitScript((hint) => {
        if (localStorage.getItem('test:hinted')) return;
        localStorage.setItem('test:hinted', '1');
        localStorage.setItem('rookery:account', hint);
      }, JSON.stringify({ name }));
      const page = await openPage(device, suite.errors, `${suite.url}/`);
      await page.locator('#account-button').getByText(name).waitFor();
      // Ends every session of the account, this device's too.
      assert.equal((await other.request.delete(`${suite.url}/api/account/sessions`)).status(), 204);
      await page.locator('#login-link').waitFor({ timeout: 30_000 });
      const why = page.locator('.session-ended');
      await why.getByText('You were logged out: the session ended on another device, or it expired.').waitFor();
      await assertInView(why, 'the reason');
      await expectRefused(401);
      // The next page says nothing more: it was said once.
      await page.reload();
      await page.locator('#login-link').waitFor();
      assert.equal(await page.locator('.session-ended').count(), 0);
      // Logging out here, by one's own hand, needs no reason.
    });
  });

  describe(`the game page keeps what matters in view (${size.name})`, () => {
    test('an offer, the chat and the analysis do not push each other out of sight', { timeout: 180_000 }, async () => {
      const [whiteName, blackName] = [`view_w_${size.name}`, `view_b_${size.name}`];
      const [fay, gus] = [await person(size, whiteName), await person(size, blackName)];
      const id = await accountGame(fay, gus, blackName);
      const white = await openPage(fay, suite.errors, `${suite.url}/games/${id}`);
      const black = await openPage(gus, suite.errors, `${suite.url}/games/${id}`);
      await white.getByText('You play white').waitFor();
      await black.getByText('You play black').waitFor();
      for (const [page, other, uci, piece] of [[white, black, 'e2e4', 'wP'], [black, white, 'e7e5', 'bP'], [white, black, 'g1f3', 'wN'], [black, white, 'b8c6', 'bN']]) {
        await clickMove(page, uci);
        await expectPiece(other, uci.slice(2, 4), piece);
      }
      await expectPiece(white, 'c6', 'bN');

      // During the game: a draw offer arrives; its answers and the chat's
      // box are both in view, the board too.
      await black.getByRole('button', { name: 'Offer draw' }).click();
      await white.getByText('Your opponent offers a draw.').waitFor();
      await assertInView(white.getByRole('button', { name: 'Accept draw' }), 'Accept draw');
      await assertInView(white.getByRole('button', { name: 'Decline draw' }), 'Decline draw');
      await openChat(white);
      await assertInView(white.locator('#chat-input'), 'the chat box');
      await white.locator('#chat-input').fill('Thinking about it');
      await white.locator('#chat-input').press('Enter');
      await black.locator('.chat-line').getByText('Thinking about it').waitFor({ state: 'attached' });
      await closeChat(white);
      await white.getByRole('button', { name: 'Decline draw' }).click();
      await white.locator('.offer').waitFor({ state: 'hidden' });

      // After it: the result, a rematch offer, the analysis and the chat.
      assert.equal((await gus.request.post(`${suite.url}/api/games/${id}/resign`)).status(), 200);
      await white.locator('.banner').waitFor();
      await black.locator('.banner').waitFor();
      await black.getByRole('button', { name: 'Rematch' }).click();
      await white.getByText('Your opponent offers a rematch.').waitFor();
      await assertInView(white.getByRole('button', { name: 'Accept rematch' }), 'Accept rematch');
      await assertInView(white.getByRole('button', { name: 'Decline rematch' }), 'Decline rematch');
      await assertInView(white.locator('.banner-headline'), 'the result');
      if (size.name === 'desktop') {
        await assertInView(white.getByRole('button', { name: 'Analyse with the engine' }), 'the analysis');
      } else {
        // On the phone the page scrolls to it, and the offer stays in view.
        await white.getByRole('button', { name: 'Analyse with the engine' }).scrollIntoViewIfNeeded();
        await assertInView(white.getByRole('button', { name: 'Analyse with the engine' }), 'the analysis');
        await assertInView(white.getByRole('button', { name: 'Accept rematch' }), 'Accept rematch after scrolling');
        await white.evaluate(() => window.scrollTo(0, 0));
      }
      await openChat(white);
      await assertInView(white.locator('#chat-input'), 'the chat box after the game');
      await assertInView(white.getByRole('button', { name: 'Accept rematch' }), 'Accept rematch beside the chat');
      await docShot(white, `in-view-${size.name}`);
    });
  });
}

// The chat is in the panel on a desktop; on a phone it opens from the
// "Chat" button, which is always in view.
async function openChat(page) {
  const toggle = page.locator('.chat-toggle');
  if (await toggle.isVisible()) {
    await assertInView(toggle, 'the chat button');
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  }
  await page.locator('#chat-input').waitFor();
}

async function closeChat(page) {
  const toggle = page.locator('.chat-toggle');
  if (await toggle.isVisible() && (await toggle.getAttribute('aria-expanded')) === 'true') await toggle.click();
}
