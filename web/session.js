// Who is logged in on this browser, and the header's account control.
//
// The session is an HttpOnly cookie set by the server (docs/API.md,
// "Accounts, sessions and API tokens"): the page cannot read it, so it asks
// `GET /api/account` once per page load, and only when this browser
// remembers a login (storage.js, getAccountHint). Logging in, signing up
// and logging out go through here, so every part of the page hears of the
// change (`onAccountChange`), and so do the other tabs (the hint's storage
// event).

import { api } from './api.js';
import { h, clear } from './dom.js';
import { getAccountHint, heldGameIds, saveAccountHint } from './storage.js';
import { t } from './i18n.js';

let accountPromise = null;
const listeners = new Set();

// The logged-in account (the server's Account object), or null.
export function currentAccount() {
  if (!accountPromise) accountPromise = fetchAccount();
  return accountPromise;
}

async function fetchAccount() {
  if (!getAccountHint()) return null;
  try {
    const account = await api('GET', '/api/account');
    saveAccountHint(account);
    return account;
  } catch (error) {
    // 401: the session ended (logged out elsewhere, expired). Any other
    // failure (the server unreachable) keeps the hint for the next page.
    if (error.status === 401) sessionEnded();
    return null;
  }
}

function setAccount(account) {
  saveAccountHint(account);
  accountPromise = Promise.resolve(account);
  for (const listener of listeners) listener(account);
}

// `listener(account | null)` after every login or logout, here or in
// another tab of this browser.
export function onAccountChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

// Another tab logged in or out: the cookie is shared, so this tab asks
// again who it is.
window.addEventListener('storage', (event) => {
  if (event.key !== 'rookery:account') return;
  accountPromise = null;
  currentAccount().then((account) => {
    for (const listener of listeners) listener(account);
  });
});

export async function logIn(name, password) {
  const account = await api('POST', '/api/session', { body: { name, password } });
  setAccount(account);
  return account;
}

export async function signUp(name, password) {
  const account = await api('POST', '/api/accounts', { body: { name, password } });
  setAccount(account);
  return account;
}

// Ends this browser's session. The server answers 204 even for a session
// it no longer knows, so the page is logged out either way.
export async function logOut() {
  try {
    await api('DELETE', '/api/session');
  } finally {
    setAccount(null);
  }
}

// After "log out everywhere" (this session ended with the others).
export function forgetSession() {
  setAccount(null);
}

// The server no longer knows this browser's session, which this page did
// not end: it was logged out from another device ("log out everywhere", a
// new password, the account page's list) or it expired. The page flips to
// "Log in" and says why, once: the hint goes with it.
export function sessionEnded() {
  if (!getAccountHint()) return;
  showSessionEnded();
  setAccount(null);
}

function showSessionEnded() {
  if (document.querySelector('.session-ended')) return;
  const note = h('div', { class: 'session-ended', role: 'status' },
    h('p', null, t('You were logged out: the session ended on another device, or it expired.')),
    h('a', { class: 'button primary', href: loginHref() }, t('Log in again')),
    h('button', { type: 'button', class: 'session-ended-close', 'aria-label': t('Dismiss') }, '×'));
  note.querySelector('.session-ended-close').addEventListener('click', () => note.remove());
  const header = document.querySelector('.site-header');
  if (header) header.after(note);
  else document.body.prepend(note);
}

// What to tell a person about a refused login, sign-up or password change.
export function accountErrorText(error) {
  if (error.status === 429) {
    return error.retryAfter !== null
      ? t('Too many tries, wait {seconds} s.', { seconds: error.retryAfter })
      : t('Too many tries, wait a little before the next one.');
  }
  const known = {
    unauthorized: t('Wrong name or password.'),
    name_taken: t('That name is taken. Try another.'),
  };
  if (known[error.code]) return known[error.code];
  // The server's own words ("a password has at least 8 characters"), as a
  // sentence.
  const text = String(error.message || t('The server refused that.'));
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?:]$/.test(text) ? '' : '.'}`;
}

// Where to go back to after logging in: a path on this site only. The
// address is resolved as the browser would resolve it (which turns `/\host`
// and `/<tab>/host` into another host) and kept only if it stays on this
// origin; what is followed is the resolved path, never the raw text.
export function backPath() {
  const back = new URLSearchParams(window.location.search).get('back') || '/';
  if (!back.startsWith('/')) return '/';
  let url;
  try {
    url = new URL(back, window.location.origin);
  } catch {
    return '/';
  }
  if (url.origin !== window.location.origin) return '/';
  return `${url.pathname}${url.search}${url.hash}`;
}

const here = () => `${window.location.pathname}${window.location.search}`;

export function loginHref() {
  const path = window.location.pathname;
  const back = path === '/login' || path === '/signup' ? backPath() : here();
  return back === '/' ? '/login' : `/login?back=${encodeURIComponent(back)}`;
}

// A page that needs a login, drawn for a visitor who is not logged in.
export function askToLogIn(root, title, text) {
  clear(root, h('section', { class: 'card narrow' },
    h('h1', null, title),
    h('p', null, text),
    h('p', { class: 'actions' },
      h('a', { class: 'button primary', href: loginHref() }, t('Log in')),
      h('a', { class: 'button', href: '/signup' }, t('Sign up')))));
}

// The header's control: "Log in" (and "My games" when this browser holds
// seats), or the account's name opening a small menu.
export function accountControl() {
  const holder = h('div', { class: 'account-nav' });
  let closeMenu = () => {};
  // The name the button shows (null for a visitor).
  let drawnName = null;
  const draw = (account) => {
    // The server's answer confirming the name the hint drew changes nothing:
    // redrawing would close a menu the person has just opened.
    if (account && account.name === drawnName) return;
    drawnName = account ? account.name : null;
    closeMenu();
    if (!account) {
      clear(holder,
        heldGameIds().length ? h('a', { href: '/me/games', class: 'header-link' }, t('My games')) : null,
        h('a', { href: loginHref(), class: 'header-link', id: 'login-link' }, t('Log in')));
      return;
    }
    const menuId = 'account-menu';
    const button = h('button', {
      type: 'button', class: 'account-button', id: 'account-button', 'aria-expanded': 'false', 'aria-controls': menuId,
    }, account.name);
    const logout = h('button', { type: 'button', id: 'logout-button' }, t('Log out'));
    const menu = h('div', { class: 'account-menu', id: menuId, hidden: true },
      h('a', { href: `/players/${encodeURIComponent(account.name)}` }, t('Your player page')),
      h('a', { href: '/me/games' }, t('My games')),
      h('a', { href: '/account' }, t('Account and sessions')),
      logout);
    const open = (show) => {
      menu.hidden = !show;
      button.setAttribute('aria-expanded', String(show));
      if (show) menu.querySelector('a').focus();
    };
    closeMenu = () => open(false);
    button.addEventListener('click', () => open(menu.hidden));
    menu.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      event.stopPropagation();
      open(false);
      button.focus();
    });
    logout.addEventListener('click', async () => {
      logout.disabled = true;
      await logOut().catch(() => {});
      // Pages drawn for the account (its settings, its games) are stale.
      if (['/account', '/me/games'].includes(window.location.pathname)) window.location.assign('/');
    });
    clear(holder, button, menu);
  };
  document.addEventListener('pointerdown', (event) => {
    if (event.target instanceof Node && !holder.contains(event.target)) closeMenu();
  });
  // The hint draws the name at once; the server's answer corrects it.
  const hint = getAccountHint();
  draw(hint ? { name: hint.name } : null);
  currentAccount().then(draw);
  onAccountChange(draw);
  return holder;
}
