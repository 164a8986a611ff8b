// A game over HTTPS (issue 21): rookery-server serves TLS itself
// (`--tls-cert`/`--tls-key`) with a certificate from a throwaway CA made
// here with the `openssl` command, and Chromium trusts exactly that
// certificate's key (`--ignore-certificate-errors-spki-list`, never a
// blanket --ignore-certificate-errors). Two pages play a friend game, made
// in the lobby and joined by its invite link, with the moves over wss://;
// the session cookie of an account made over HTTPS is Secure. A browser
// without the flag refuses the site.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserSuite, clickMove, expectPiece, launchBrowser, makePki, openPage, trustFlag } from './harness.mjs';

const pkiDir = mkdtempSync(join(tmpdir(), 'rookery-e2e-pki-'));
let pki;
const suite = browserSuite({
  server: () => {
    pki = makePki(pkiDir);
    return { tls: pki };
  },
  browser: () => ({ args: [trustFlag(pki.cert)] }),
});
after(() => rmSync(pkiDir, { recursive: true, force: true }));

// The page's own fetch: Node's would not trust the test's CA.
const fetchJson = (page, path) => page.evaluate(async (url) => (await fetch(url)).json(), path);

// Records the WebSocket addresses a page opens.
function sockets(page) {
  const urls = [];
  page.on('websocket', (socket) => urls.push(socket.url()));
  return urls;
}

describe('HTTPS end to end', () => {
  test('a browser without the certificate trusted refuses the site', { timeout: 60_000 }, async () => {
    assert.match(suite.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const plain = await launchBrowser();
    try {
      const page = await plain.newPage();
      await assert.rejects(page.goto(suite.url), /ERR_CERT_AUTHORITY_INVALID/);
    } finally {
      await plain.close();
    }
  });

  test('two pages play a friend game over https:// and wss://, with a Secure session cookie', { timeout: 120_000 }, async () => {
    // Alice signs up over HTTPS: her session cookie is Secure.
    const aliceContext = await suite.newContext();
    const alice = await openPage(aliceContext, suite.errors, `${suite.url}/signup`);
    assert.equal(await alice.evaluate(() => window.isSecureContext && window.location.protocol), 'https:');
    await alice.locator('#account-name').fill('tls_alice');
    await alice.locator('#account-password').fill('a long pass phrase 7');
    await alice.getByRole('button', { name: 'Sign up' }).click();
    await alice.locator('#account-button').getByText('tls_alice').waitFor();
    const cookie = (await aliceContext.cookies()).find((c) => c.name === 'rookery_session');
    assert.ok(cookie, 'a session cookie');
    assert.equal(cookie.secure, true);
    assert.equal(cookie.httpOnly, true);

    const aliceSockets = sockets(alice);
    await alice.goto(`${suite.url}/`);
    await alice.getByRole('radio', { name: 'A friend' }).check();
    await alice.getByRole('button', { name: 'Create game and get link' }).click();
    await alice.waitForURL(/\/games\/[^/]+$/);
    const invite = await alice.locator('#invite-link').inputValue();
    assert.match(invite, /^https:\/\/127\.0\.0\.1:\d+\/games\/[^/#]+#invite=[0-9a-f]{64}$/);
    await alice.getByText('Waiting for your friend to join').waitFor();

    const bob = await openPage(await suite.newContext(), suite.errors);
    const bobSockets = sockets(bob);
    await bob.goto(invite);
    await bob.getByRole('button', { name: 'Join as black' }).click();
    await bob.getByText('You play black').waitFor();
    await alice.getByText('Your move.').waitFor();
    for (const page of [alice, bob]) await page.locator('.connection.open').waitFor();

    await clickMove(alice, 'f2f3');
    await expectPiece(bob, 'f3', 'wP');
    await clickMove(bob, 'e7e5');
    await expectPiece(alice, 'e5', 'bP');
    await clickMove(alice, 'g2g4');
    await expectPiece(bob, 'g4', 'wP');
    await clickMove(bob, 'd8h4');
    for (const page of [alice, bob]) await page.locator('.banner-headline').getByText('Black wins').waitFor();

    const gameId = new URL(alice.url()).pathname.split('/').pop();
    const state = await fetchJson(bob, `/api/games/${gameId}`);
    assert.deepEqual(state.moves, ['f2f3', 'e7e5', 'g2g4', 'd8h4']);
    assert.equal(state.termination, 'checkmate');
    assert.equal(state.white.name, 'tls_alice');
    // Every game socket went over TLS.
    const gameSockets = [...aliceSockets, ...bobSockets].filter((url) => url.includes(`/ws/games/${gameId}`));
    assert.ok(gameSockets.length >= 2, gameSockets.join(' '));
    for (const url of gameSockets) assert.match(url, /^wss:\/\/127\.0\.0\.1:\d+\/ws\/games\//);
  });
});
