// Issue 36, "the first hour", in real Chromium against the real server, at
// 1280×900 and on a 390×844 phone: finding people (the header's search as
// you type, who is online on the lobby with what they play, a challenge
// dialog from a name anywhere, challenge by name), rated or casual on every
// form (the friend form casual unless chosen, the game page saying which,
// lists and seeks saying which with ratings, the ratings at stake before a
// challenge), getting an account back (an e-mail address verified by a
// link, "Forgot password?" mailing a single-use link read here from a
// local SMTP sink this file starts, the reset ending every session), and
// the smaller points (the dark switch, the tab's mark on a challenge, dates
// and time controls in lists, the 404 page's header, real 404 statuses, the
// help page, the PGN import row, no AudioContext on Shift, Chess960 in the
// player page's challenge). Every test fails on a console error it did
// not expect.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  api, browserSuite, openPage, waitUntil,
} from './harness.mjs';

// A local SMTP sink: takes every letter the server sends and keeps it.
const mails = [];
async function startSmtpSink() {
  const server = net.createServer((socket) => {
    // Neither the sink nor the server's pooled connections to it may keep
    // this file's process alive once its tests are done.
    socket.unref();
    socket.setEncoding('utf8');
    let buffer = '';
    let data = null;
    let to = [];
    socket.write('220 sink ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (data !== null) {
          if (line === '.') {
            mails.push({ to, text: data.replace(/=\r\n/g, '').replace(/=3D/g, '=') });
            data = null;
            to = [];
            socket.write('250 OK queued\r\n');
          } else {
            data += `${line.startsWith('.') ? line.slice(1) : line}\r\n`;
          }
          continue;
        }
        const command = line.toUpperCase();
        if (command.startsWith('EHLO')) socket.write('250-sink\r\n250 8BITMIME\r\n');
        else if (command.startsWith('RCPT TO')) {
          to.push(line.slice(8).trim().replace(/^<|>$/g, ''));
          socket.write('250 OK\r\n');
        } else if (command === 'DATA') {
          data = '';
          socket.write('354 go ahead\r\n');
        } else if (command === 'QUIT') {
          socket.end('221 bye\r\n');
        } else socket.write('250 OK\r\n');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  server.unref();
  return server.address().port;
}

const suite = browserSuite({
  server: async () => {
    const port = await startSmtpSink();
    Object.assign(process.env, {
      ROOKERY_SMTP_HOST: '127.0.0.1',
      ROOKERY_SMTP_PORT: String(port),
      ROOKERY_SMTP_TLS: 'none',
      ROOKERY_SMTP_FROM: 'Rookery <chess@rookery.test>',
      ROOKERY_PUBLIC_URL: 'http://rookery.test',
    });
    return {};
  },
});
const PASSWORD = 'a long pass phrase 7';
const SIZES = [
  ['desktop', { viewport: { width: 1280, height: 900 } }],
  ['phone', { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }],
];

// Takes the console errors of refused requests (`status of 404`) off the
// list; at least one was expected.
async function expectRefused(status) {
  const refused = () => suite.errors.filter((line) => line.includes(`status of ${status}`));
  await waitUntil(() => refused().length >= 1, { timeout: 5_000 })
    .catch(() => assert.fail(`a ${status} expected among: ${suite.errors.join('\n')}`));
  for (let index = suite.errors.length - 1; index >= 0; index--) {
    if (suite.errors[index].includes(`status of ${status}`)) suite.errors.splice(index, 1);
  }
}

// Signs `name` up in a new browser profile; the lobby page.
async function person(name, options) {
  const context = await suite.newContext(options);
  const page = await openPage(context, suite.errors, `${suite.url}/signup`);
  await page.locator('#account-name').fill(name);
  await page.locator('#account-password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.waitForURL(`${suite.url}/`);
  await page.locator('#account-button').getByText(name).waitFor();
  return { context, page };
}

// A player with no game, made through the API (a player token).
const player = (name) => api(suite.url, 'POST', '/api/players', { body: { name } });

const fits = (page) => page.evaluate((width) => document.documentElement.scrollWidth <= width, page.viewportSize().width);

describe('finding people', () => {
  for (const [size, options] of SIZES) {
    test(`the header finds players as you type and challenges them (${size})`, { timeout: 120_000 }, async () => {
      const tag = size === 'desktop' ? 'd' : 'p';
      await player(`zara_${tag}1`);
      await player(`Zara_${tag}2`);
      await player(`zed_${tag}`);
      // A visitor finds them too; the challenge asks to log in first.
      const visitor = await openPage(await suite.newContext(options), suite.errors, `${suite.url}/watch`);
      await visitor.locator('#player-search').fill(`ZARA_${tag}`);
      const results = visitor.locator('#player-search-results');
      await results.locator('.player-search-item').first().waitFor();
      assert.deepEqual(await results.locator('.player-search-item .player-link').allTextContents(), [`zara_${tag}1`, `Zara_${tag}2`]);
      assert.match(await results.textContent(), /1500\?/);
      assert.ok(await fits(visitor), 'the results fit the screen');
      await results.getByRole('button', { name: `Send zara_${tag}1 a challenge` }).click();
      const dialog = visitor.locator('#challenge-dialog');
      await dialog.getByText(`Log in to challenge zara_${tag}1.`).waitFor();
      await dialog.getByRole('button', { name: 'Close' }).click();
      await visitor.locator('#player-search').fill('nobody_here');
      await results.getByText('Nobody’s name starts with “nobody_here”.').waitFor();

      // Logged in: the dialog's form sends the challenge, with Chess960.
      const { page } = await person(`seeker_${tag}`, options);
      await page.locator('#player-search').fill(`zed_${tag}`);
      await page.locator('#player-search-results .player-search-item').first().waitFor();
      await page.getByRole('button', { name: `Send zed_${tag} a challenge` }).click();
      const form = page.locator('#challenge-dialog');
      await form.locator('#challenge-variant').selectOption('chess960');
      await form.getByRole('radio', { name: 'Casual', exact: true }).check();
      await form.getByRole('button', { name: 'Send challenge' }).click();
      const outgoing = page.locator('.challenge-tray .challenge-card.outgoing');
      await outgoing.getByText('to answer your challenge').waitFor();
      assert.equal(await page.locator('#challenge-dialog').count(), 0, 'the dialog closed');
    });

    test(`the lobby shows who is online and what they play, with challenges by name (${size})`, { timeout: 120_000 }, async () => {
      const tag = size === 'desktop' ? 'd' : 'p';
      const other = await person(`online_${tag}`, options);
      const { page } = await person(`looker_${tag}`, options);
      const list = page.locator('#online-list');
      const row = list.locator(`.online-person[data-name="online_${tag}"]`);
      await row.waitFor();
      assert.match(await row.textContent(), /1500\?.*in the lobby/);
      await row.getByRole('button', { name: `Send online_${tag} a challenge` }).waitFor();
      assert.ok(await fits(page), 'the lobby fits the screen');

      // The other plays: the list links to the game.
      // (A game against the computer, made with the other's session.)
      await other.page.evaluate(async () => {
        const answer = await fetch('/api/games', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ white: { kind: 'human' }, black: { kind: 'ai', level: 1 }, as: 'white' }),
        });
        window.created = (await answer.json()).game.id;
      });
      const playing = await other.page.evaluate(() => window.created);
      await row.locator(`a.online-playing[href="/games/${playing}"]`).waitFor({ timeout: 15_000 });

      // Challenge by name: an unknown name is said so; a known one opens the dialog.
      await page.locator('#challenge-name').fill('no_such_person');
      await page.locator('.challenge-by-name').getByRole('button', { name: 'Challenge' }).click();
      await page.locator('#challenge-name-error').getByText('Nobody is called “no_such_person”.').waitFor();
      await expectRefused(404);
      await page.locator('#challenge-name').fill(`ONLINE_${tag}`);
      await page.locator('.challenge-by-name').getByRole('button', { name: 'Challenge' }).click();
      const dialog = page.locator('#challenge-dialog');
      await dialog.getByRole('heading', { name: `Challenge online_${tag}` }).waitFor();
      // The ratings at stake, before anything is sent.
      await dialog.locator('.stakes').getByText(/win \+\d+, draw ±0, loss −\d+/).waitFor();
      await dialog.getByRole('button', { name: 'Send challenge' }).click();

      // The one challenged sees the stakes too, and the tab's title says it.
      const incoming = other.page.locator('.challenge-tray .challenge-card.incoming');
      await incoming.locator('.stakes').getByText(/win \+\d+/).waitFor();
      await waitUntil(async () => /^\(1\) /.test(await other.page.title()), { what: 'the title mark' });
      await incoming.getByRole('button', { name: 'Decline…' }).click();
      await incoming.getByRole('button', { name: 'Decline', exact: true }).click();
      await waitUntil(async () => !/^\(\d+\) /.test(await other.page.title()), { what: 'the mark to go' });
    });
  }
});

describe('rated and casual', () => {
  for (const [size, options] of SIZES) {
    test(`a friend game is casual unless chosen, and pages and lists say which, with ratings (${size})`, { timeout: 120_000 }, async () => {
      const tag = size === 'desktop' ? 'd' : 'p';
      const { page } = await person(`rater_${tag}`, options);
      const form = page.locator('form.new-game');
      assert.equal(await form.getByRole('radio', { name: 'Casual', exact: true }).isChecked(), true);
      await form.getByRole('button', { name: 'Create game and get link' }).click();
      await page.waitForURL(/\/games\//);
      await page.locator('.game-meta').getByText('Casual').waitFor();
      const casualId = page.url().split('/games/')[1];
      assert.equal((await api(suite.url, 'GET', `/api/games/${casualId}`)).rated, false);

      await page.goto(`${suite.url}/`);
      await form.getByRole('radio', { name: 'Rated', exact: true }).check();
      await form.locator('#open-seek').check();
      await form.getByRole('button', { name: 'Post open seek' }).click();
      await page.waitForURL(/\/games\//);
      await page.locator('.game-meta').getByText('Rated').waitFor();
      const ratedId = page.url().split('/games/')[1];
      assert.equal((await api(suite.url, 'GET', `/api/games/${ratedId}`)).rated, true);

      // The seek row: the seeker's rating and "Rated".
      const other = await openPage(await suite.newContext(options), suite.errors, `${suite.url}/`);
      const seek = other.locator(`#open-seeks [data-game-id="${ratedId}"]`);
      await seek.waitFor();
      assert.match(await seek.textContent(), new RegExp(`rater_${tag} \\(1500\\?\\).*· Rated`));
      // The watch list: time control, rated or casual, the date.
      const watch = await openPage(await suite.newContext(options), suite.errors, `${suite.url}/watch`);
      const item = watch.locator(`[data-game-id="${ratedId}"]`);
      await item.waitFor();
      assert.match(await item.textContent(), /rater_\w+ \(1500\?\) vs .*no clock · Rated/);
      assert.equal(await item.locator('time.game-date').count(), 1);
      assert.ok(await fits(watch));
    });
  }
});

describe('getting an account back', () => {
  for (const [size, options] of SIZES) {
    test(`an address verified by a mailed link, then "Forgot password?" by mail (${size})`, { timeout: 120_000 }, async () => {
      const tag = size === 'desktop' ? 'd' : 'p';
      const name = `lost_${tag}`;
      const address = `${name}@example.org`;
      const { context, page } = await person(name, options);
      const second = await openPage(await suite.newContext(options), suite.errors, `${suite.url}/login`);
      await second.locator('#account-name').fill(name);
      await second.locator('#account-password').fill(PASSWORD);
      await second.getByRole('button', { name: 'Log in' }).click();
      await second.locator('#account-button').waitFor();

      await page.goto(`${suite.url}/account`);
      await page.locator('#email-input').fill(address);
      await page.getByRole('button', { name: 'Send a confirmation link' }).click();
      await page.locator('#email-note').getByText(`A confirmation link is on its way to ${address}.`).waitFor();
      const verify = await waitUntil(() => mails.find((mail) => mail.to.includes(address) && mail.text.includes('/verify-email?token=')), { what: 'the verification letter' });
      const verifyLink = verify.text.match(/http:\/\/rookery\.test(\/verify-email\?token=[0-9a-f]+)/)[1];
      await page.goto(`${suite.url}${verifyLink}`);
      await page.locator('#verify-result[data-ok="true"]').waitFor();
      await page.goto(`${suite.url}/account`);
      await page.locator('#email-status').getByText(`Confirmed: ${address}.`).waitFor();

      // Forgotten: from the log-in page, by name.
      const lost = await openPage(await suite.newContext(options), suite.errors, `${suite.url}/login`);
      await lost.getByRole('link', { name: 'Forgot password?' }).click();
      await lost.waitForURL(`${suite.url}/forgot-password`);
      await lost.locator('#forgot-login').fill(name.toUpperCase());
      await lost.getByRole('button', { name: 'Send me a reset link' }).click();
      await lost.locator('#forgot-sent').waitFor();
      const letter = await waitUntil(() => mails.find((mail) => mail.to.includes(address) && mail.text.includes('/reset-password?token=')), { what: 'the reset letter' });
      const resetLink = letter.text.match(/http:\/\/rookery\.test(\/reset-password\?token=[0-9a-f]+)/)[1];
      await lost.goto(`${suite.url}${resetLink}`);
      await lost.getByRole('heading', { name: `A new password for ${name}` }).waitFor();
      await lost.locator('#reset-password').fill('a brand new pass phrase');
      await lost.getByRole('button', { name: 'Set the new password' }).click();
      await lost.locator('#reset-done').waitFor();
      // Used once: the link no longer works.
      await lost.goto(`${suite.url}${resetLink}`);
      await lost.locator('#reset-unusable').waitFor();
      await expectRefused(400);

      // Every session ended: both devices are logged out.
      for (const device of [page, second]) {
        await device.goto(`${suite.url}/account`);
        await device.getByRole('heading', { name: 'Account' }).waitFor();
        await device.locator('#login-link').waitFor();
      }
      await expectRefused(401);
      assert.ok(context);
    });
  }

  test('a reset for a name nobody has says the same, and sends nothing', { timeout: 60_000 }, async () => {
    const before = mails.length;
    const page = await openPage(await suite.newContext(), suite.errors, `${suite.url}/forgot-password`);
    await page.locator('#forgot-login').fill('nobody_at_all');
    await page.getByRole('button', { name: 'Send me a reset link' }).click();
    await page.locator('#forgot-sent').getByText('If an account with that name or address has a verified e-mail address').waitFor();
    await new Promise((done) => setTimeout(done, 500));
    assert.equal(mails.length, before);
  });
});

describe('the smaller points', () => {
  for (const [size, options] of SIZES) {
    test(`dark switch, help page, 404s with the header, PGN row, Shift and sound (${size})`, { timeout: 120_000 }, async () => {
      const context = await suite.newContext({ ...options, colorScheme: 'light' });
      await context.addInitScript(() => {
        window.audioContexts = 0;
        const Original = window.AudioContext;
        window.AudioContext = class Counted extends Original {
          constructor(...args) {
            super(...args);
            window.audioContexts += 1;
          }
        };
      });
      const page = await openPage(context, suite.errors, `${suite.url}/`);
      // Shift first: no AudioContext (it could not start without a gesture).
      await page.locator('#new-game-title').waitFor();
      await page.keyboard.press('Shift');
      assert.equal(await page.evaluate(() => window.audioContexts), 0);
      const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
      const light = await background();
      await page.getByRole('button', { name: 'Board settings' }).click();
      const panel = page.getByRole('dialog', { name: 'Board settings' });
      await panel.getByRole('radio', { name: 'Dark', exact: true }).check();
      await waitUntil(async () => (await background()) !== light, { what: 'the dark colours' });
      const dark = await background();
      await page.reload();
      assert.equal(await background(), dark, 'remembered');
      await page.getByRole('button', { name: 'Board settings' }).click();
      await panel.getByRole('radio', { name: 'System', exact: true }).check();
      await waitUntil(async () => (await background()) === light, { what: 'the system colours (light here)' });

      // The PGN import: the file picker and the button on one row.
      const file = await page.locator('.import-actions input[type="file"]').boundingBox();
      const button = await page.locator('.import-actions').getByRole('button', { name: 'Import' }).boundingBox();
      assert.ok(Math.abs((file.y + file.height / 2) - (button.y + button.height / 2)) <= 3, `${JSON.stringify(file)} ${JSON.stringify(button)}`);

      // The help page, from the footer.
      await page.getByRole('link', { name: 'Help and rules' }).click();
      await page.waitForURL(`${suite.url}/help`);
      for (const heading of ['The first move', 'Clocks', 'Rated and casual games', 'Ratings', 'Arena tournaments and berserk', 'Swiss tournaments', 'Fair play']) {
        await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      }
      assert.ok(await fits(page));

      // Missing things: status 404, the page's own words, the header whole.
      for (const [path, heading] of [
        ['/games/00000000-0000-4000-8000-000000000000', 'Game not found'],
        ['/players/nobody_by_that_name', 'Player not found'],
        ['/no/such/page', 'Page not found'],
      ]) {
        const response = await page.goto(`${suite.url}${path}`);
        assert.equal(response.status(), 404, path);
        await page.getByRole('heading', { name: heading }).waitFor();
        await page.locator('.site-header #login-link').waitFor();
        await page.locator('.site-header').getByRole('button', { name: 'Board settings' }).waitFor();
        // A game page on a phone leaves the search out of sight (the board
        // keeps the height); it is still part of the header.
        const hiddenByDesign = size === 'phone' && path.startsWith('/games/');
        await page.locator('.site-header #player-search').waitFor({ state: hiddenByDesign ? 'attached' : 'visible' });
      }
      await expectRefused(404);
    });
  }

  test('the player page offers Chess960 in its challenge', { timeout: 60_000 }, async () => {
    await player('chess960_friend');
    const { page } = await person('chess960_asker');
    await page.goto(`${suite.url}/players/chess960_friend`);
    await page.getByRole('button', { name: 'Challenge chess960_friend' }).click();
    await page.locator('#challenge-variant').selectOption('chess960');
    await page.getByRole('button', { name: 'Send challenge' }).click();
    await page.locator('.challenge-card.outgoing').getByText('to answer your challenge').waitFor();
    const id = await page.locator('.challenge-card.outgoing').getAttribute('data-challenge-id');
    assert.ok(id);
  });
});
