// The account page (/account): the password (set or change), the sessions
// (device, last seen, this device) with "Log out" for each and "Log out
// everywhere", the personal API tokens (made with scopes and a
// description, shown once with a copy button, listed, revoked), and the key
// of a name this browser saved without an account; then who may challenge
// me, the people followed and blocked, and leaving (social.js).

import { emailSection } from './recovery.js';
import { api } from './api.js';
import { h, clear } from './dom.js';
import { copyButton, keyBox } from './namecard.js';
import { playerHref, ratingText } from './format.js';
import { accountErrorText, askToLogIn, currentAccount, forgetSession } from './session.js';
import { accountSocialSections } from './social.js';
import { getPlayer } from './storage.js';
import { formatDate, language, t } from './i18n.js';

const SCOPES = [
  ['play', t('Play games'), t('create, join and play your own games'), true],
  ['challenge', t('Challenges'), t('send and answer challenges, read your event stream'), true],
  ['bot', t('Bot'), t('play as a bot'), false],
];

export async function accountPage(root) {
  document.title = t('Account · Rookery');
  const account = await currentAccount();
  if (!account) {
    askToLogIn(root, t('Account'), t('You are not logged in on this browser.'));
    return;
  }
  document.title = `${account.name}: account · Rookery`;
  const sessions = h('div', { id: 'sessions', 'aria-live': 'polite' });
  const tokens = h('div', { id: 'tokens', 'aria-live': 'polite' });
  const player = getPlayer();
  clear(root, h('div', { class: 'account-page' },
    h('section', { class: 'card' },
      h('h1', null, account.name,
        h('span', { class: 'rating-badge' }, ratingText(account.rating, account.provisional))),
      h('p', { class: 'actions' },
        h('a', { href: playerHref(account.name) }, t('Your player page')),
        h('a', { href: '/me/games' }, t('My games')))),
    h('section', { class: 'card', 'aria-labelledby': 'sessions-title' },
      h('h2', { id: 'sessions-title' }, t('Sessions')),
      h('p', { class: 'muted' }, t('The browsers and devices logged in to your account.')),
      sessions),
    passwordSection(account, () => loadSessions(sessions)),
    emailSection(account),
    h('section', { class: 'card', 'aria-labelledby': 'tokens-title' },
      h('h2', { id: 'tokens-title' }, t('Personal API tokens')),
      h('p', { class: 'muted' }, t('For scripts, bots and the terminal client ('),
        h('code', null, t('rookery login')), t('). A token acts as you within its scopes.')),
      tokenForm(() => loadTokens(tokens)),
      tokens),
    accountSocialSections(account),
    player && player.name.toLowerCase() !== account.name.toLowerCase()
      ? h('section', { class: 'card' },
        h('h2', null, t('A name saved on this browser')),
        h('p', null, `This browser also holds ${player.name}, a name without an account, used when you are logged out.`),
        keyBox(player))
      : null));
  await Promise.all([loadSessions(sessions), loadTokens(tokens)]);
}

// The end of this browser's session: the page says so and leaves.
function loggedOutHere() {
  forgetSession();
  window.location.assign('/login');
}

async function loadSessions(holder) {
  let list;
  try {
    list = (await api('GET', '/api/account/sessions')).sessions;
  } catch (error) {
    if (error.status === 401) {
      loggedOutHere();
      return;
    }
    clear(holder, h('p', { class: 'form-error', role: 'alert' }, t('Sessions are unavailable: {reason}', { reason: error.message })));
    return;
  }
  const message = h('p', { class: 'form-error', role: 'alert' });
  const everywhere = h('button', { type: 'button', class: 'danger', id: 'logout-everywhere' }, t('Log out everywhere'));
  everywhere.addEventListener('click', async () => {
    everywhere.disabled = true;
    try {
      await api('DELETE', '/api/account/sessions');
      loggedOutHere();
    } catch (error) {
      everywhere.disabled = false;
      message.textContent = error.message;
    }
  });
  const rows = list
    .slice()
    .sort((a, b) => Number(b.current) - Number(a.current) || b.last_seen_at - a.last_seen_at)
    .map((session) => {
      const end = h('button', { type: 'button', class: 'small' }, t('Log out'));
      end.addEventListener('click', async () => {
        end.disabled = true;
        try {
          await api('DELETE', `/api/account/sessions/${encodeURIComponent(session.id)}`);
          if (session.current) loggedOutHere();
          else await loadSessions(holder);
        } catch (error) {
          end.disabled = false;
          message.textContent = error.message;
        }
      });
      return h('li', { class: 'session-row', dataset: { sessionId: session.id, current: String(!!session.current) } },
        h('div', null,
          h('span', { class: 'session-device', title: session.device }, deviceName(session.device)),
          session.current ? h('span', { class: 'badge' }, t('This device')) : null,
          h('div', { class: 'game-details' },
            t('Last seen {seen} · logged in {since}', { seen: when(session.last_seen_at), since: when(session.created_at) }))),
        end);
    });
  clear(holder,
    h('ul', { class: 'session-list' }, rows),
    h('div', { class: 'actions' }, everywhere),
    h('p', { class: 'muted' }, t('“Log out everywhere” ends every session, this one too.')),
    message);
}

function passwordSection(account, onChanged) {
  const has = account.has_password;
  const current = h('input', { type: 'password', id: 'current-password', autocomplete: 'current-password' });
  const next = h('input', { type: 'password', id: 'new-password', autocomplete: 'new-password', minlength: '8' });
  const message = h('p', { class: 'form-error', role: 'alert' });
  const done = h('p', { class: 'form-ok', role: 'status' });
  const submit = h('button', { type: 'submit', class: 'primary' }, has ? t('Change password') : t('Set password'));
  const form = h('form', { class: 'account-form', novalidate: true },
    h('input', { type: 'text', name: 'username', value: account.name, autocomplete: 'username', hidden: true, readonly: true, tabindex: '-1', 'aria-hidden': 'true' }),
    has ? h('label', { class: 'field' }, h('span', null, t('Current password')), current) : null,
    h('label', { class: 'field' }, h('span', null, t('New password')), next),
    h('p', { class: 'muted hint' }, t('At least 8 characters, not a common password and not your name. Changing it logs out your other sessions.')),
    message, done, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    done.textContent = '';
    submit.disabled = true;
    try {
      const body = { password: next.value };
      if (has) body.current = current.value;
      await api('PUT', '/api/account/password', { body });
      current.value = '';
      next.value = '';
      done.textContent = t('Password saved. Your other sessions were logged out.');
      onChanged();
    } catch (error) {
      message.textContent = error.status === 401 && has ? t('The current password is wrong.') : accountErrorText(error);
    } finally {
      submit.disabled = false;
    }
  });
  return h('section', { class: 'card', 'aria-labelledby': 'password-title' },
    h('h2', { id: 'password-title' }, has ? t('Password') : t('Set a password')), form);
}

function tokenForm(onCreated) {
  const description = h('input', { type: 'text', id: 'token-description', maxlength: '100', autocomplete: 'off', placeholder: t('What the token is for') });
  const boxes = SCOPES.map(([scope, label, what, checked]) => h('label', { class: 'checkbox' },
    h('input', { type: 'checkbox', name: 'scope', value: scope, checked }),
    h('span', null, h('strong', null, label), ` — ${what}`)));
  const message = h('p', { class: 'form-error', role: 'alert' });
  const shown = h('div', { class: 'token-shown', hidden: true, role: 'status' });
  const submit = h('button', { type: 'submit' }, t('Create token'));
  const form = h('form', { class: 'account-form', id: 'token-form', novalidate: true },
    h('label', { class: 'field' }, h('span', null, t('Description')), description),
    h('fieldset', null, h('legend', null, t('Scopes')), boxes),
    message, submit, shown);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    const scopes = [...form.querySelectorAll('input[name="scope"]:checked')].map((box) => box.value);
    if (!scopes.length) {
      message.textContent = t('Choose at least one scope.');
      return;
    }
    submit.disabled = true;
    try {
      const made = await api('POST', '/api/account/tokens', { body: { description: description.value.trim() || undefined, scopes } });
      description.value = '';
      const field = h('input', { type: 'text', id: 'new-token', class: 'key-field', readonly: true, value: made.token });
      clear(shown,
        h('p', null, h('strong', null, t('Copy this token now: it is not shown again.'))),
        h('div', { class: 'invite-row' }, h('label', { for: 'new-token', class: 'visually-hidden' }, t('New token')), field, copyButton(() => made.token, field)));
      shown.hidden = false;
      field.select();
      onCreated();
    } catch (error) {
      message.textContent = error.message;
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

async function loadTokens(holder) {
  let list;
  try {
    list = (await api('GET', '/api/account/tokens')).tokens;
  } catch (error) {
    if (error.status === 401) return;
    clear(holder, h('p', { class: 'form-error', role: 'alert' }, t('Tokens are unavailable: {reason}', { reason: error.message })));
    return;
  }
  if (!list.length) {
    clear(holder, h('p', { class: 'muted' }, t('No tokens yet.')));
    return;
  }
  clear(holder, h('ul', { class: 'session-list token-list' }, list.map((token) => {
    const revoke = h('button', { type: 'button', class: 'small danger' }, t('Revoke'));
    revoke.addEventListener('click', async () => {
      revoke.disabled = true;
      try {
        await api('DELETE', `/api/account/tokens/${encodeURIComponent(token.id)}`);
      } catch {
        // Already gone (revoked in another tab): the list below says so.
      }
      await loadTokens(holder);
    });
    return h('li', { class: 'session-row', dataset: { tokenId: token.id } },
      h('div', null,
        h('span', { class: 'session-device' }, token.description || t('Unnamed token')),
        token.scopes.map((scope) => h('span', { class: 'badge' }, scope)),
        h('div', { class: 'game-details' },
          `Created ${when(token.created_at)} · ${token.last_used_at ? `last used ${when(token.last_used_at)}` : 'never used'}`)),
      revoke);
  })));
}

// "Chrome on Linux" from a User-Agent; other clients (the terminal
// client, scripts) by their own first word.
export function deviceName(agent) {
  const ua = String(agent || '');
  if (!ua) return t('Unknown device');
  const browser = /Edg\//.test(ua) ? 'Edge'
    : /Firefox\//.test(ua) ? 'Firefox'
      : /OPR\//.test(ua) ? 'Opera'
        : /(Headless)?Chrom(e|ium)\//.test(ua) ? 'Chrome'
          : /Safari\//.test(ua) ? 'Safari'
            : null;
  const system = /Android/.test(ua) ? 'Android'
    : /iPhone|iPad|iPod/.test(ua) ? 'iOS'
      : /Windows/.test(ua) ? 'Windows'
        : /Mac OS X|Macintosh/.test(ua) ? 'macOS'
          : /CrOS/.test(ua) ? 'ChromeOS'
            : /Linux|X11/.test(ua) ? 'Linux'
              : null;
  if (browser) return system ? `${browser} on ${system}` : browser;
  return ua.split(/[\s;(]/)[0] || ua;
}

// "just now", "5 minutes ago", "3 days ago"; the date beyond a month.
export function when(ms) {
  if (typeof ms !== 'number') return t('never');
  const seconds = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (seconds < 60) return t('just now');
  // "vor 5 Minuten", "il y a 3 jours": the language's own words (Intl).
  const ago = (n, unit) => new Intl.RelativeTimeFormat(language, { numeric: 'always' }).format(-n, unit);
  if (seconds < 3600) return ago(Math.floor(seconds / 60), 'minute');
  if (seconds < 86400) return ago(Math.floor(seconds / 3600), 'hour');
  if (seconds < 30 * 86400) return ago(Math.floor(seconds / 86400), 'day');
  return formatDate(ms);
}
