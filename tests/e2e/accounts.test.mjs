// Accounts in the browser (issue 21), in real Chromium against the real
// server, with separate browser profiles (contexts) standing for separate
// devices: sign up, log in elsewhere, a challenge by name shown live in
// every profile of the person, accepted on one device and played, "log out
// everywhere"; a declined and a cancelled challenge; a rematch between
// accounts (no seat tokens anywhere); the refusals (wrong password,
// throttling); a token-only name claimed with a password; "Play
// anonymously" asking first; the account page's tokens; "My games" with
// and without an account; the new pages on a phone; a challenge accepted
// before its sender has read the answer to Send. Every
// test fails on a console error it did not expect (Chromium logs each
// refused request, a documented 401 or 429, as one). Screenshots of the
// account page and of a challenge notification land in artifacts/e2e/, and
// in docs/screenshots/ with E2E_DOC_SCREENSHOTS=1.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  api, browserSuite, clickMove, docShot, expectPiece, friendGame, openPage, seatIn, unnamedControls, waitUntil,
} from './harness.mjs';

const suite = browserSuite();
const PASSWORD = 'a long pass phrase 7';

// Takes the console errors of refused requests (`status of 401`) off the
// list; at least `min` of them were expected (they may be reported a
// moment after the page has shown the refusal).
async function expectRefused(status, min = 1) {
  const refused = () => suite.errors.filter((line) => line.includes(`status of ${status}`));
  await waitUntil(() => refused().length >= min, { timeout: 5_000 })
    .catch(() => assert.fail(`${min} × ${status} expected among: ${suite.errors.join('\n')}`));
  // In place: the pages push into this very array.
  for (let index = suite.errors.length - 1; index >= 0; index--) {
    if (suite.errors[index].includes(`status of ${status}`)) suite.errors.splice(index, 1);
  }
}

// A context whose pages record the sounds they play (sound.js announces
// each as a `rookery:sound` event).
async function device() {
  const context = await suite.newContext();
  await context.addInitScript(() => {
    window.playedSounds = [];
    window.addEventListener('rookery:sound', (event) => window.playedSounds.push(event.detail));
  });
  return context;
}

async function fillAccountForm(page, name, password) {
  await page.locator('#account-name').fill(name);
  await page.locator('#account-password').fill(password);
}

async function signUpIn(context, name) {
  const page = await openPage(context, suite.errors, `${suite.url}/signup`);
  await fillAccountForm(page, name, PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.waitForURL(`${suite.url}/`);
  await page.locator('#account-button').getByText(name).waitFor();
  return page;
}

async function logInIn(context, name, back = '') {
  const page = await openPage(context, suite.errors, `${suite.url}/login${back}`);
  await fillAccountForm(page, name, PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('#account-button').getByText(name).waitFor();
  return page;
}

describe('accounts in the browser', () => {
  test('sign up on A, log in on B, challenged by name from C, accepted on B and played; log out everywhere', { timeout: 240_000 }, async () => {
    const [a, b, c] = [await device(), await device(), await device()];

    // A signs up; B logs in to the same account: the same player page.
    const pageA = await signUpIn(a, 'proof_ann');
    await pageA.goto(`${suite.url}/players/proof_ann`);
    const ratingA = await pageA.locator('#player-rating').textContent();
    const pageB = await logInIn(b, 'proof_ann', `?back=${encodeURIComponent('/players/proof_ann')}`);
    await pageB.waitForURL(`${suite.url}/players/proof_ann`);
    assert.equal(await pageB.locator('#player-rating').textContent(), ratingA);
    assert.equal(await pageB.locator('h1').first().textContent(), await pageA.locator('h1').first().textContent());
    // Her own page offers no challenge to herself.
    assert.equal(await pageB.locator('#challenge-button').count(), 0);

    // A second tab on A: the tabs of one browser share one event stream.
    let streams = 0;
    a.on('request', (request) => {
      if (request.url().endsWith('/api/stream/event')) streams += 1;
    });
    const pageA2 = await openPage(a, suite.errors, `${suite.url}/watch`);
    await pageA2.locator('#account-button').getByText('proof_ann').waitFor();

    // C, another person, challenges proof_ann by name from her page.
    const pageC = await signUpIn(c, 'proof_cy');
    await pageC.goto(`${suite.url}/players/proof_ann`);
    await pageC.getByRole('button', { name: 'Challenge proof_ann' }).click();
    await pageC.locator('#challenge-clock').selectOption('300+3');
    await pageC.getByRole('radio', { name: 'White', exact: true }).check();
    await pageC.getByRole('radio', { name: 'Casual', exact: true }).check();
    await pageC.getByRole('button', { name: 'Send challenge' }).click();
    await pageC.locator('#challenge-sent').waitFor();
    const outgoing = pageC.locator('.challenge-tray .challenge-card.outgoing');
    await outgoing.getByText('to answer your challenge').waitFor();
    assert.match(await outgoing.textContent(), /5\+3 blitz · casual · you play white/);

    // The notification shows live on both of proof_ann's devices (and in
    // both tabs of A), in a live region, with a sound.
    for (const page of [pageA, pageA2, pageB]) {
      const card = page.locator('.challenge-tray .challenge-card.incoming');
      await card.getByText('proof_cy (1500?) challenges you').waitFor();
      assert.match(await card.textContent(), /5\+3 blitz · casual · you play black/);
      assert.equal(await page.locator('.challenge-tray').getAttribute('aria-live'), 'polite');
      await waitUntil(() => page.evaluate(() => window.playedSounds.includes('challenge')), { what: 'the challenge sound' });
      assert.deepEqual(await unnamedControls(page), []);
    }
    assert.equal(streams, 0, 'the second tab opened no stream of its own');
    await docShot(pageA, 'challenge');
    const challengeId = await pageA.locator('.challenge-card.incoming').getAttribute('data-challenge-id');

    // Accepted on B: B and C land in the game, A is told with a link.
    // Each of B and C goes to the game once: the accepting tab hears of the
    // game both from its Accept (the HTTP answer) and from the event stream
    // (`gameStart`), and a second navigation would abort the first (seen
    // once in CI as `net::ERR_ABORTED` from `waitForURL`).
    const gameUrl = `${suite.url}/games/${challengeId}`;
    const toGame = new Map([[pageB, 0], [pageC, 0]]);
    for (const page of toGame.keys()) {
      page.on('request', (request) => {
        if (request.isNavigationRequest() && request.url() === gameUrl) toGame.set(page, toGame.get(page) + 1);
      });
    }
    await pageB.locator('.challenge-card.incoming').getByRole('button', { name: 'Accept' }).click();
    for (const page of toGame.keys()) {
      await waitUntil(() => page.url() === gameUrl, { what: 'the game page' });
    }
    // Once the game page is there the page that could go twice is gone.
    assert.deepEqual([...toGame.values()], [1, 1], 'navigations to the game from B and from C');
    await pageA.getByText('Your game against proof_cy has started.').waitFor();
    assert.equal(pageA.url(), `${suite.url}/players/proof_ann`);
    await pageA.getByRole('link', { name: 'Go to the game' }).click();
    await pageA.waitForURL(`${suite.url}/games/${challengeId}`);

    // No seat tokens: each seat comes with its account.
    await pageC.getByText('You play white').waitFor();
    await pageB.getByText('You play black').waitFor();
    await clickMove(pageC, 'e2e4');
    await expectPiece(pageB, 'e4', 'wP');
    await clickMove(pageB, 'e7e5');
    await expectPiece(pageC, 'e5', 'bP');
    const game = await api(suite.url, 'GET', `/api/games/${challengeId}`);
    assert.deepEqual(game.moves, ['e2e4', 'e7e5']);
    assert.equal(game.white.name, 'proof_cy');
    assert.equal(game.black.name, 'proof_ann');

    // The same seat on A, the other device, from the account alone.
    await pageA.getByText('You play black').waitFor();
    await pageA.getByText('Waiting for your opponent to move.').waitFor();

    // My games, on C: the live game first.
    await pageC.goto(`${suite.url}/me/games`);
    await pageC.locator(`#my-live-games [data-game-id="${challengeId}"]`).getByText('Your move').waitFor();

    // B's account page: both sessions, and an API token shown once.
    await pageB.goto(`${suite.url}/account`);
    await pageB.locator('.session-row').nth(1).waitFor();
    assert.equal(await pageB.locator('.session-row').count(), 2);
    assert.equal(await pageB.locator('.session-row[data-current="true"]').getByText('This device').count(), 1);
    await pageB.locator('#token-description').fill('my bot');
    await pageB.getByRole('checkbox', { name: /^Bot/ }).check();
    await pageB.getByRole('button', { name: 'Create token' }).click();
    const token = await pageB.locator('#new-token').inputValue();
    assert.match(token, /^rky_[0-9a-f]{64}$/);
    await pageB.locator('.token-list [data-token-id]').getByText('my bot').waitFor();
    assert.deepEqual(await pageB.locator('.token-list .badge').allTextContents(), ['play', 'challenge', 'bot']);
    assert.equal((await api(suite.url, 'GET', '/api/account', { token })).name, 'proof_ann');
    assert.deepEqual(await unnamedControls(pageB), []);
    await docShot(pageB, 'account', { fullPage: true });
    await pageB.reload();
    await pageB.locator('.token-list [data-token-id]').waitFor();
    assert.equal(await pageB.locator('#new-token').count(), 0, 'a token is shown once');
    await pageB.locator('.token-list').getByRole('button', { name: 'Revoke' }).click();
    await pageB.getByText('No tokens yet.').waitFor();
    await assert.rejects(api(suite.url, 'GET', '/api/account', { token }), /401/);

    // "Log out everywhere" from B ends A's session too.
    await pageB.getByRole('button', { name: 'Log out everywhere' }).click();
    await pageB.waitForURL(`${suite.url}/login`);
    await pageB.locator('#login-link').waitFor();
    await pageA.goto(`${suite.url}/`);
    await pageA.locator('#login-link').waitFor();
    assert.equal(await pageA.locator('#account-button').count(), 0);
    await pageA.goto(`${suite.url}/account`);
    await pageA.getByText('You are not logged in on this browser.').waitFor();
    await expectRefused(401);
  });

  test('a declined challenge tells its sender why; a cancelled one leaves the one challenged', { timeout: 120_000 }, async () => {
    for (const name of ['decline_dan', 'decline_eve']) {
      await api(suite.url, 'POST', '/api/accounts', { body: { name, password: PASSWORD } });
    }
    const eve = await logInIn(await device(), 'decline_eve');
    const dan = await logInIn(await device(), 'decline_dan', `?back=${encodeURIComponent('/players/decline_eve')}`);
    await dan.waitForURL(`${suite.url}/players/decline_eve`);
    const send = async () => {
      await dan.getByRole('button', { name: 'Challenge decline_eve' }).click();
      await dan.locator('#challenge-clock').selectOption('60+0');
      await dan.getByRole('button', { name: 'Send challenge' }).click();
      await dan.locator('.challenge-card.outgoing').waitFor();
    };

    await send();
    const firstId = await dan.locator('.challenge-card.outgoing').getAttribute('data-challenge-id');
    const card = eve.locator('.challenge-card.incoming');
    await card.getByText('decline_dan (1500?) challenges you').waitFor();
    assert.match(await card.textContent(), /1\+0 bullet · rated/);
    await card.getByRole('button', { name: 'Decline…' }).click();
    await card.getByLabel('Reason').selectOption('tooFast');
    await card.getByRole('button', { name: 'Decline', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    await dan.locator('.challenge-answer[data-answer="declined"]')
      .getByText('decline_eve declined your challenge: “This time control is too fast for me, please challenge again with a slower game.”')
      .waitFor();
    assert.equal(await dan.locator('.challenge-card.outgoing').count(), 0);
    // The challenge's own page (its `url`) says the same.
    const shown = await openPage(dan.context(), suite.errors, `${suite.url}/challenges/${firstId}`);
    await shown.locator('#challenge-status').getByText(/^This challenge was declined: “This time control is too fast/).waitFor();
    await shown.close();

    await send();
    await card.waitFor();
    await dan.locator('.challenge-card.outgoing').getByRole('button', { name: 'Cancel challenge' }).click();
    await eve.locator('.challenge-answer[data-answer="canceled"]').getByText('decline_dan cancelled their challenge.').waitFor();
    assert.equal(await eve.locator('.challenge-card.incoming').count(), 0);
    assert.equal(await dan.locator('.challenge-card.outgoing').count(), 0);
  });

  test('a challenge accepted before its sender hears the answer to Send still takes the sender to the game', { timeout: 120_000 }, async () => {
    // A bot accepts the moment a challenge reaches its event stream: the
    // sender's stream may bring `gameStart` before the page has read the
    // answer to its own POST. Held back here until after the start, the
    // answer still sends the page to the game.
    const created = await fetch(`${suite.url}/api/accounts`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'quick_quinn', password: PASSWORD }),
    });
    assert.equal(created.status, 201, await created.text());
    const cookie = created.headers.get('set-cookie').split(';')[0];
    const made = await fetch(`${suite.url}/api/account/tokens`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', Cookie: cookie },
      body: JSON.stringify({ scopes: ['challenge'] }),
    });
    assert.equal(made.status, 201, await made.clone().text());
    const { token } = await made.json();

    const page = await signUpIn(await device(), 'slow_sam');
    await page.goto(`${suite.url}/players/quick_quinn`);
    let accepted = null;
    await page.route('**/api/challenge/quick_quinn', async (route) => {
      const response = await route.fetch();
      const challenge = await response.json();
      await api(suite.url, 'POST', `/api/challenge/${challenge.id}/accept`, { token });
      accepted = challenge.id;
      // The stream's `gameStart` reaches the page first.
      await page.locator('.challenge-card.notice').getByText('Your game against quick_quinn has started.')
        .waitFor({ timeout: 10_000 });
      await route.fulfill({ response });
    });
    await page.getByRole('button', { name: 'Challenge quick_quinn' }).click();
    await page.getByRole('button', { name: 'Send challenge' }).click();
    await page.waitForURL(/\/games\/[^/]+$/, { timeout: 15_000 });
    assert.ok(accepted, 'the challenge was accepted');
    assert.equal(new URL(page.url()).pathname, `/games/${accepted}`);
    await page.getByText(/You play (white|black)/).waitFor();
  });

  test('a rematch between two accounts, with no seat tokens, seats both in the new game', { timeout: 120_000 }, async () => {
    // Signed up through each profile's own cookie jar (the context's
    // request API), the browser told of the login as the page would be.
    const person = async (name) => {
      const context = await device();
      const answer = await context.request.post(`${suite.url}/api/accounts`, { data: { name, password: PASSWORD } });
      assert.equal(answer.status(), 201);
      await context.addInitScript((hint) => localStorage.setItem('rookery:account', hint), JSON.stringify({ name }));
      return context;
    };
    const [fay, gus] = [await person('rematch_fay'), await person('rematch_gus')];
    const sent = await fay.request.post(`${suite.url}/api/challenge/rematch_gus`, { form: { color: 'white', 'clock.limit': '600', 'clock.increment': '0' } });
    const { id } = await sent.json();
    assert.equal((await gus.request.post(`${suite.url}/api/challenge/${id}/accept`)).status(), 200);
    const white = await openPage(fay, suite.errors, `${suite.url}/games/${id}`);
    const black = await openPage(gus, suite.errors, `${suite.url}/games/${id}`);
    await white.getByText('You play white').waitFor();
    await black.getByText('You play black').waitFor();
    await clickMove(white, 'e2e4');
    await expectPiece(black, 'e4', 'wP');
    await black.getByRole('button', { name: 'Resign' }).click();
    await black.getByRole('button', { name: 'Confirm resignation' }).click();
    for (const page of [white, black]) await page.locator('.banner-headline').getByText('White wins').waitFor();
    assert.equal(await white.locator('.banner-verdict').textContent(), 'You won!');

    await white.getByRole('button', { name: 'Rematch', exact: true }).click();
    await black.getByText('Your opponent offers a rematch.').waitFor();
    await black.getByRole('button', { name: 'Accept rematch' }).click();
    for (const page of [white, black]) {
      await page.waitForURL((url) => url.pathname.startsWith('/games/') && !url.pathname.endsWith(id));
    }
    await white.getByText('You play black').waitFor();
    await black.getByText('You play white').waitFor();
    await clickMove(black, 'd2d4');
    await expectPiece(white, 'd4', 'wP');
    const rematch = await api(suite.url, 'GET', `/api/games/${new URL(black.url()).pathname.split('/').pop()}`);
    assert.equal(rematch.white.name, 'rematch_gus');
    assert.equal(rematch.black.name, 'rematch_fay');
    // No seat token was ever stored: the seats came with the accounts.
    for (const page of [white, black]) {
      assert.deepEqual(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('rookery:seat'))), []);
    }
  });

  test('refusals: a wrong password, a weak one, a taken name, then "too many tries"', { timeout: 120_000 }, async () => {
    await api(suite.url, 'POST', '/api/accounts', { body: { name: 'refused_rae', password: PASSWORD } });
    const page = await openPage(await suite.newContext(), suite.errors, `${suite.url}/signup`);
    await fillAccountForm(page, 'refused_new', 'short');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.locator('#account-error').getByText('A password has at least 8 characters.').waitFor();
    await fillAccountForm(page, 'refused_rae', PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.locator('#account-error').getByText('That name is taken. Try another.').waitFor();
    await expectRefused(400);
    await expectRefused(409);

    await page.goto(`${suite.url}/login`);
    // Five failures are free; the sixth try comes too soon.
    for (let attempt = 0; attempt < 5; attempt++) {
      await fillAccountForm(page, 'refused_rae', `wrong guess ${attempt}`);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.locator('#account-error').getByText('Wrong name or password.').waitFor();
    }
    await fillAccountForm(page, 'refused_rae', PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#account-error').getByText(/^Too many tries, wait \d+ s\.$/).waitFor();
    await expectRefused(401, 5);
    await expectRefused(429);
    // After the wait the right password works: nobody is locked out.
    await new Promise((done) => setTimeout(done, 2_100));
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${suite.url}/`);
    await page.locator('#account-button').getByText('refused_rae').waitFor();
  });

  test('after logging in, `back` never leads to another host (issue 35)', { timeout: 120_000 }, async () => {
    await api(suite.url, 'POST', '/api/accounts', { body: { name: 'back_bea', password: PASSWORD } });
    const origin = new URL(suite.url).origin;
    // Each of these resolves to another host in a browser (a backslash is
    // read as a slash, a tab is dropped); the right one stays on this site.
    const cases = [
      ['/%5Cevil.invalid', '/'],
      ['/%09/evil.invalid', '/'],
      ['//evil.invalid/x', '/'],
      ['https://evil.invalid/', '/'],
      ['/watch?x=1', '/watch?x=1'],
    ];
    for (const [back, expected] of cases) {
      const context = await suite.newContext();
      const page = await openPage(context, suite.errors, `${suite.url}/login?back=${back}`);
      await fillAccountForm(page, 'back_bea', PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.locator('#account-button').getByText('back_bea').waitFor();
      await page.waitForURL((url) => url.pathname !== '/login');
      const landed = new URL(page.url());
      assert.equal(landed.origin, origin, `back=${back} left the site for ${page.url()}`);
      assert.equal(`${landed.pathname}${landed.search}`, expected, `back=${back}`);
      await context.close();
    }
  });

  test('a name saved without an account is claimed with a password, its key shown, and kept on another device', { timeout: 120_000 }, async () => {
    const context = await suite.newContext();
    const page = await openPage(context, suite.errors, `${suite.url}/`);
    await page.locator('#player-name').fill('claim_dora');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.locator('.player-self').getByText('claim_dora').waitFor();
    const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('rookery:player')));

    // The key is the owner's to see and copy.
    await page.getByText('Show your name’s key').click();
    assert.equal(await page.locator('#player-key').inputValue(), stored.token);
    assert.deepEqual(await unnamedControls(page), []);

    // "Play anonymously" warns first; keeping the name changes nothing.
    await page.getByRole('button', { name: 'Play anonymously' }).click();
    await page.locator('#forget-warning').getByText(/claim_dora has no password/).waitFor();
    await page.getByRole('button', { name: 'Keep claim_dora' }).click();
    await page.locator('.player-self').getByText('claim_dora').waitFor();

    // Claimed: a password, then logged in.
    await page.getByLabel('Set a password to keep your name on every device').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.locator('#account-button').getByText('claim_dora').waitFor();
    await page.getByText('You are logged in as').waitFor();
    // The old player token keeps working, and now has a password.
    assert.equal((await api(suite.url, 'GET', '/api/account', { token: stored.token })).has_password, true);

    // Another device logs in with it.
    const other = await suite.newContext();
    const there = await logInIn(other, 'claim_dora');
    await there.goto(`${suite.url}/players/claim_dora`);
    await there.locator('h1').getByText('claim_dora').waitFor();
  });

  test('"Play anonymously" says what is lost and asks before forgetting a name', { timeout: 60_000 }, async () => {
    const page = await openPage(await suite.newContext(), suite.errors, `${suite.url}/`);
    await page.locator('#player-name').fill('anon_erin');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.locator('.player-self').getByText('anon_erin').waitFor();
    await page.getByRole('button', { name: 'Play anonymously' }).click();
    const warning = page.locator('#forget-warning');
    await warning.waitFor();
    assert.match(await warning.textContent(), /nobody can use the name again, you included/);
    // Nothing is forgotten until the person says so.
    assert.notEqual(await page.evaluate(() => localStorage.getItem('rookery:player')), null);
    await page.getByRole('button', { name: 'Forget anon_erin' }).click();
    await page.locator('#player-name').waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('rookery:player')), null);
  });

  test('the header, the account pages and the challenge form fit a phone, light and dark', { timeout: 120_000 }, async () => {
    // The longest name there can be.
    const name = 'fit_a_twenty_chars_x';
    await api(suite.url, 'POST', '/api/accounts', { body: { name, password: PASSWORD } });
    await api(suite.url, 'POST', '/api/accounts', { body: { name: 'fit_other', password: PASSWORD } });
    const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
    for (const colorScheme of ['light', 'dark']) {
      const context = await suite.newContext({ ...phone, colorScheme });
      const fits = async (page, what) => {
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= 390, `${colorScheme}: ${what} is ${width}px wide on a 390px screen`);
        assert.deepEqual(await unnamedControls(page), [], `${colorScheme}: ${what}`);
      };
      const page = await openPage(context, suite.errors, `${suite.url}/login`);
      await fits(page, 'the login page');
      await fillAccountForm(page, name, PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${suite.url}/`);
      await page.locator('#account-button').click();
      await page.locator('#account-menu').waitFor();
      const menu = await page.locator('#account-menu').boundingBox();
      assert.ok(menu.x >= 0 && menu.x + menu.width <= 390, `${colorScheme}: menu box ${JSON.stringify(menu)}`);
      await fits(page, 'the lobby with the account menu open');
      for (const [path, drawn] of [['/account', '.session-row'], ['/me/games', '#my-recent-games[aria-busy="false"]']]) {
        await page.goto(`${suite.url}${path}`);
        await page.locator(drawn).first().waitFor();
        await fits(page, path);
      }
      await page.goto(`${suite.url}/players/fit_other`);
      await page.getByRole('button', { name: 'Challenge fit_other' }).click();
      await fits(page, 'the challenge form');
    }
  });

  test('My games without an account: the games whose seats this browser holds', { timeout: 60_000 }, async () => {
    const live = await friendGame(suite.url);
    const finished = await friendGame(suite.url);
    await api(suite.url, 'POST', `/api/games/${finished.id}/move`, { body: { uci: 'e2e4' }, token: finished.white.token });
    await api(suite.url, 'POST', `/api/games/${finished.id}/resign`, { token: finished.black.token });
    const context = await suite.newContext();
    await seatIn(context, live.id, live.white);
    await seatIn(context, finished.id, finished.black);
    const page = await openPage(context, suite.errors, `${suite.url}/`);
    await page.getByRole('link', { name: 'My games' }).first().click();
    await page.waitForURL(`${suite.url}/me/games`);
    await page.locator(`#my-live-games [data-game-id="${live.id}"]`).getByText('Your move').waitFor();
    await page.locator(`#my-recent-games [data-game-id="${finished.id}"]`).waitFor();
    assert.equal(await page.locator('.my-games [data-game-id]').count(), 2);
  });
});
