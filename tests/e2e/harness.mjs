// Test harness: the real rookery-server on port 0 with a temporary SQLite
// database, and Debian's headless Chromium driven by playwright-core.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, afterEach, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// The password of the accounts tests make.
export const PASSWORD = 'a long pass phrase 7';
export const ARTIFACTS = join(ROOT, 'artifacts', 'e2e');
const STARTUP_TIMEOUT_MS = 60_000;

// `dir` and `addr` let a test restart a server on the same database and port.
// `tls` (`{ cert, key }`, PEM files, see makePki) serves HTTPS: the url is
// then `https://…`.
export async function startServer({ dir = mkdtempSync(join(tmpdir(), 'rookery-e2e-')), addr = '127.0.0.1:0', tls = null } = {}) {
  const bin = process.env.ROOKERY_SERVER_BIN || join(ROOT, 'target', 'debug', 'rookery-server');
  const database = `sqlite://${join(dir, 'e2e.db')}`;
  // The client under test is this checkout's web/, whatever the binary's default.
  const args = ['--addr', addr, '--database', database, '--web-dir', join(ROOT, 'web')];
  if (tls) args.push('--tls-cert', tls.cert, '--tls-key', tls.key);
  const child = spawn(bin, args, {
    cwd: ROOT,
    // Every page of every test is the one client 127.0.0.1, which leaves
    // more games waiting than a person would (the cap per client has its
    // own test, tests/retention.rs).
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'warn', ROOKERY_MAX_WAITING_GAMES_PER_CLIENT: '10000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (chunk) => { log += chunk; });
  const url = await new Promise((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not print its address within ${STARTUP_TIMEOUT_MS} ms\n${out}\n${log}`));
    }, STARTUP_TIMEOUT_MS);
    child.on('error', (error) => { clearTimeout(timer); reject(error); });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited early with ${code}\n${out}\n${log}`)); });
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/listening on (https?:\/\/\S+)/);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1].replace(/\/$/, ''));
      }
    });
  });
  child.removeAllListeners('exit');
  return {
    url,
    dir,
    log: () => log,
    // A crash: SIGKILL, database left in place for a restart.
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGKILL');
        await exited;
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// `args` add Chromium flags (say, a certificate to trust, see trustFlag).
export async function launchBrowser({ args = [] } = {}) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
}

// A throwaway certificate authority, made with the `openssl` command, as
// tests/support/pki.rs makes one for the Rust tests: a CA and a server
// certificate for 127.0.0.1 and localhost signed by it (P-256 keys, two
// days), as PEM files in `dir`.
export function makePki(dir) {
  const file = (name) => join(dir, name);
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2',
    '-subj', '/CN=Rookery e2e test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('req', ...ec, '-keyout', file('key.pem'), '-out', file('server.csr'), '-subj', '/CN=localhost');
  writeFileSync(file('server.ext'), [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=serverAuth',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '',
  ].join('\n'));
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'),
    '-CAcreateserial', '-days', '2', '-extfile', file('server.ext'), '-out', file('cert.pem'));
  return { ca: file('ca.pem'), cert: file('cert.pem'), key: file('key.pem') };
}

// The base64 SHA-256 of a certificate's public key (its SPKI), as
// Chromium's --ignore-certificate-errors-spki-list takes it.
export function spkiHash(certPath) {
  const pubkey = execFileSync('openssl', ['x509', '-in', certPath, '-pubkey', '-noout']);
  const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: pubkey });
  return execFileSync('openssl', ['dgst', '-sha256', '-binary'], { input: der }).toString('base64');
}

// The Chromium flag that trusts this one certificate's key, and no other
// (not a blanket --ignore-certificate-errors).
export const trustFlag = (certPath) => `--ignore-certificate-errors-spki-list=${spkiHash(certPath)}`;

// A page whose console errors and uncaught exceptions are collected; every
// test ends by asserting the list is empty.
export async function openPage(context, errors, url) {
  const page = await context.newPage();
  // Generous: CI runs these beside the compose test and fuzzing on two
  // cores, where a page's modules once took over 15 s to render a form.
  page.setDefaultTimeout(30_000);
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${page.url()}: console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`${page.url()}: uncaught: ${error.message}`));
  if (url) await page.goto(url);
  return page;
}

export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

// The README's screenshots: into artifacts/e2e/ on every run, and into
// docs/screenshots/ (committed) only when E2E_DOC_SCREENSHOTS=1 asks for
// them, so an ordinary run leaves the checkout clean. `target` is a page or
// an element; `options` go to its screenshot (`fullPage` for a page).
export async function docShot(target, name, options = {}) {
  const folders = [ARTIFACTS];
  if (process.env.E2E_DOC_SCREENSHOTS === '1') folders.push(join(ROOT, 'docs', 'screenshots'));
  for (const folder of folders) {
    mkdirSync(folder, { recursive: true });
    await target.screenshot({ ...options, path: join(folder, `${name}.png`) });
  }
}

export async function api(base, method, path, { body, token } = {}) {
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status} ${text}`);
  return text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
}

// Polls until `check` returns a truthy value; fails after `timeout` ms.
export async function waitUntil(check, { timeout = 15_000, interval = 100, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((done) => setTimeout(done, interval));
  }
}

// The pieces the page shows, as "square:piece" strings, sorted.
export async function boardPieces(page) {
  return page.$$eval('.board [data-square] [data-piece]', (pieces) => pieces
    .map((piece) => `${piece.closest('[data-square]').dataset.square}:${piece.dataset.piece}`)
    .sort());
}

// The same from a FEN, for comparing with the server's state.
export function fenPieces(fen) {
  const result = [];
  fen.split(' ')[0].split('/').forEach((row, index) => {
    let file = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) file += Number(ch);
      else {
        const color = ch === ch.toUpperCase() ? 'w' : 'b';
        result.push(`${'abcdefgh'[file]}${8 - index}:${color}${ch.toUpperCase()}`);
        file += 1;
      }
    }
  });
  return result.sort();
}

// Controls without an accessible name, described for the failure message:
// every button, link and form field must have one (text, label or aria-label).
export async function unnamedControls(page) {
  return page.$$eval('button, a[href], input:not([type="hidden"]), select, textarea', (elements) => elements
    .filter((el) => !el.closest('[hidden]') && el.getClientRects().length > 0)
    .filter((el) => {
      const label = el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
      const text = el.textContent.trim();
      const labels = el.labels ? el.labels.length : 0;
      return !label && !labels && !(el.matches('button, a') && text);
    })
    .map((el) => el.outerHTML.slice(0, 120)));
}

// Seats a browser context in a game, the way the client itself remembers
// seats (localStorage, one entry per game); returns the context.
export async function seatIn(context, gameId, seat) {
  await context.addInitScript(([key, value]) => {
    if (!window.localStorage.getItem(key)) window.localStorage.setItem(key, value);
  }, [`rookery:seat:${gameId}`, JSON.stringify(seat)]);
  return context;
}

// A move by clicks: the piece's square, then the target.
export async function clickMove(page, uci) {
  await page.click(`.board [data-square="${uci.slice(0, 2)}"]`);
  await page.click(`.board [data-square="${uci.slice(2, 4)}"]`);
}

export async function expectPiece(page, square, piece, timeout = 15_000) {
  await page.waitForSelector(`.board [data-square="${square}"] [data-piece="${piece}"]`, { timeout });
}

// A human v human game created and joined through the API: its id and
// both seats.
export async function friendGame(base, body = {}) {
  const created = await api(base, 'POST', '/api/games', {
    body: { white: { kind: 'human' }, black: { kind: 'human' }, as: 'white', ...body },
  });
  const joined = await api(base, 'POST', `/api/games/${created.game.id}/join`);
  return { id: created.game.id, white: created.seat, black: joined.seat };
}

// What a failed test leaves for its reader: each open page's address and
// text (and a screenshot in artifacts/e2e/), the console errors so far, and
// the end of the server's log.
async function reportPages(suite) {
  const lines = ['-- the failed test’s pages:'];
  let index = 0;
  for (const context of suite.contexts) {
    for (const page of context.pages()) {
      index += 1;
      const text = await page.locator('body').innerText({ timeout: 2_000 }).catch((error) => `(no text: ${error.message})`);
      lines.push(`page ${index}: ${page.url()}\n${text.replace(/\s+/g, ' ').slice(0, 600)}`);
      await screenshot(page, `failed-${index}`).catch(() => {});
    }
  }
  lines.push(`-- console errors: ${suite.errors.length === 0 ? 'none' : `\n${suite.errors.join('\n')}`}`);
  const log = suite.server ? suite.server.log() : '';
  lines.push(`-- the server's log (last 3000 characters):\n${log.slice(-3000)}`);
  console.log(lines.join('\n'));
}

// The life of a browser test file, registered as the file's hooks: one
// server and one Chromium for all its tests, browser contexts made by
// `suite.newContext()` and closed after each test, and every test failing
// when a page it opened (`openPage(context, suite.errors, url)`) logged a
// console error. A test that expects some errors removes them from
// `suite.errors` (the same array for the whole test).
// `server` and `browser` are the options of startServer and launchBrowser,
// or a function that makes them when the suite starts.
export function browserSuite({ viewport = { width: 1280, height: 900 }, permissions = [], server = {}, browser = {} } = {}) {
  const suite = {
    server: null,
    browser: null,
    errors: [],
    contexts: [],
    get url() {
      return suite.server.url;
    },
    async newContext(options = {}) {
      const context = await suite.browser.newContext({ viewport, ...options });
      if (permissions.length > 0) await context.grantPermissions(permissions, { origin: suite.server.url });
      suite.contexts.push(context);
      return context;
    },
    // A browser profile logged in to a new account `name` (password
    // PASSWORD), signed up through the profile's own cookie jar; its pages
    // are told of the login as the client would be (the account hint).
    async person(name, options = {}) {
      const context = await suite.newContext(options);
      const answer = await context.request.post(`${suite.server.url}/api/accounts`, { data: { name, password: PASSWORD } });
      assert.equal(answer.status(), 201, await answer.text());
      await context.addInitScript((hint) => localStorage.setItem('rookery:account', hint), JSON.stringify({ name }));
      return context;
    },
  };
  const options = async (value) => (typeof value === 'function' ? value() : value);
  before(async () => {
    suite.server = await startServer(await options(server));
    suite.browser = await launchBrowser(await options(browser));
  });
  after(async () => {
    if (suite.browser) await suite.browser.close();
    if (suite.server) await suite.server.stop();
  });
  afterEach(async (t) => {
    // A failed test says what every page showed and what the pages and the
    // server logged, so that a failure seen once in CI can be read.
    if (!t.passed) await reportPages(suite);
    for (const context of suite.contexts) await context.close();
    const seen = suite.errors;
    suite.errors = [];
    suite.contexts = [];
    assert.deepEqual(seen, [], 'the pages logged console errors');
  });
  return suite;
}
