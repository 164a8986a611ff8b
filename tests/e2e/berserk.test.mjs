// A person in Chromium against a bot driven by lichess's own Python client
// (issue 24's proof): tests/lichess/bot.py, written on berserk's bots
// client (unmodified, from PyPI, in the virtualenv of tests/lichess/venv.sh)
// and moving with rookery-engine over UCI, runs as its own process with a
// bot account's token made here. The person signs up in the page, opens
// the bot's player page and challenges it by name; the bot accepts, greets
// in the chat and plays; the person plays legal moves by clicks until the
// game ends, and sees the bot's greeting and the result. Skipped, loudly,
// only when berserk cannot be installed (PyPI out of reach).

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, browserSuite, clickMove, openPage, waitUntil } from './harness.mjs';

const suite = browserSuite();
const PASSWORD = 'a long pass phrase 7';
const GREETING = 'Good luck from the bot!';
const ENGINE = process.env.ROOKERY_ENGINE_BIN || join(ROOT, 'target', 'debug', 'rookery-engine');

// The virtualenv's python, made when missing; null when PyPI is out of reach.
function berserkPython() {
  const made = spawnSync(join(ROOT, 'tests', 'lichess', 'venv.sh'), { encoding: 'utf8', timeout: 300_000 });
  if (made.status === 75) return null;
  assert.equal(made.status, 0, `tests/lichess/venv.sh failed:\n${made.stderr}`);
  return made.stdout.trim();
}

// A request with the session cookie or a token, from Node.
async function call(method, path, { body, cookie, token } = {}) {
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (cookie) headers.Cookie = cookie;
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(suite.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path} -> ${response.status} ${text}`);
  return { response, data: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

// A bot account: signed up, given a token (`bot` and `challenge`) with its
// session cookie, and upgraded with that token.
async function botAccount(name) {
  const { response } = await call('POST', '/api/accounts', { body: { name, password: PASSWORD } });
  const cookie = response.headers.get('set-cookie').split(';')[0];
  const { data } = await call('POST', '/api/account/tokens', { body: { scopes: ['bot', 'challenge'] }, cookie });
  await call('POST', '/api/bot/account/upgrade', { token: data.token });
  const { data: account } = await call('GET', '/api/account', { token: data.token });
  assert.equal(account.title, 'BOT');
  return data.token;
}

// The bot's process, with its output kept for a failure message.
let botProcess = null;
let botLog = '';
after(() => {
  if (botProcess && botProcess.exitCode === null) botProcess.kill('SIGTERM');
});

function startBot(python, token) {
  botProcess = spawn(python, [join(ROOT, 'tests', 'lichess', 'bot.py')], {
    env: { ...process.env, ROOKERY_URL: suite.url, ROOKERY_ENGINE: ENGINE, ROOKERY_BOT_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  botProcess.stdout.on('data', (chunk) => { botLog += chunk; });
  botProcess.stderr.on('data', (chunk) => { botLog += chunk; });
}

async function stopBot() {
  if (!botProcess || botProcess.exitCode !== null) return;
  const exited = new Promise((done) => botProcess.once('exit', done));
  botProcess.kill('SIGTERM');
  await exited;
}

// A legal move for the person: any, at random (seeded), but a promotion
// only when nothing else is legal (it takes the picker).
function pick(moves, random) {
  const plain = moves.filter((uci) => uci.length === 4);
  const from = plain.length ? plain : moves;
  return from[Math.floor(random() * from.length)];
}

// A small seeded generator (mulberry32), so a failure can be replayed.
function seeded(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('a person in Chromium against a berserk bot', () => {
  test('challenged by name, the bot accepts, greets in the chat and plays to a result', { timeout: 300_000 }, async (t) => {
    const python = berserkPython();
    if (!python) {
      const why = 'SKIPPED: berserk could not be installed from PyPI (no network?): the bot was NOT tested in the browser.';
      console.error(`!! ${why}`);
      t.skip(why);
      return;
    }
    assert.ok(existsSync(ENGINE), `${ENGINE} is missing: cargo build -p rookery-engine`);
    const token = await botAccount('berserk_bot');
    startBot(python, token);
    await waitUntil(async () => (await (await fetch(`${suite.url}/api/bot/online`)).text()).includes('berserk_bot'), {
      timeout: 30_000, interval: 200, what: `the bot online (its output: ${botLog})`,
    });

    // The person signs up in the page and challenges the bot from its page.
    const context = await suite.newContext();
    const page = await openPage(context, suite.errors, `${suite.url}/signup`);
    await page.locator('#account-name').fill('berserk_human');
    await page.locator('#account-password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.locator('#account-button').getByText('berserk_human').waitFor();
    await page.goto(`${suite.url}/players/berserk_bot`);
    await page.getByRole('button', { name: 'Challenge berserk_bot' }).click();
    await page.locator('#challenge-clock').selectOption('600+5');
    await page.getByRole('radio', { name: 'White', exact: true }).check();
    await page.getByRole('radio', { name: 'Casual', exact: true }).check();
    await page.getByRole('button', { name: 'Send challenge' }).click();
    await page.waitForURL(/\/games\/[^/]+$/, { timeout: 30_000 });
    const gameId = new URL(page.url()).pathname.split('/').pop();
    await page.getByText('You play white').waitFor();

    // The bot's greeting, through the Bot API, in the players' chat.
    await page.locator('.chat-line.theirs').filter({ hasText: GREETING }).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('.chat-line.theirs .chat-user').first().textContent(), 'berserk_bot');

    // The person moves by clicks: any legal move the server lists, until
    // the game ends (a cap of 150 moves, then resign, so it always ends).
    const random = seeded(2024);
    let game = await (await fetch(`${suite.url}/api/games/${gameId}`)).json();
    let moves = 0;
    while (game.status !== 'finished') {
      if (game.status === 'active' && game.turn === 'white') {
        if (moves >= 150) {
          await page.getByRole('button', { name: 'Resign' }).click();
          await page.getByRole('button', { name: 'Confirm resignation' }).click();
        } else {
          const uci = pick(game.legal_moves, random);
          await clickMove(page, uci);
          if (uci.length === 5) await page.click(`.promotion-choice[data-promotion="${uci[4]}"]`);
          moves += 1;
        }
      }
      const before = game.moves.length;
      game = await waitUntil(async () => {
        const now = await (await fetch(`${suite.url}/api/games/${gameId}`)).json();
        const changed = now.status === 'finished' || (now.status === 'active' && now.turn === 'white' && now.moves.length > before);
        return changed ? now : null;
      }, { timeout: 30_000, interval: 50, what: `the game to go on after ply ${before} (bot: ${botLog})` });
    }

    // The page shows the result the server holds.
    const headline = { '1-0': 'White wins', '0-1': 'Black wins', '1/2-1/2': 'Draw' }[game.result];
    await page.locator('.banner-headline').getByText(headline).waitFor();
    assert.equal(await page.locator('.banner-result').textContent(), game.result);
    assert.equal(game.white.name, 'berserk_human');
    assert.equal(game.black.name, 'berserk_bot');
    assert.ok(await page.locator('.chat-line.theirs').filter({ hasText: GREETING }).isVisible(), 'the greeting is still shown');
    await waitUntil(() => botLog.includes(`game ${gameId} over`), { what: `the bot to see the end (${botLog})` });
    console.log(`berserk bot v person in Chromium: ${game.moves.length} plies, ${game.result} by ${game.termination}`);
    await stopBot();
  });
});
