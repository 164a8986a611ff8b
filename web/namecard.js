// The lobby's "Your name" card. Three cases:
//
// - logged in: the account's name, its page and games;
// - a name saved on this browser only (a player token from
//   `POST /api/players`): the offer to claim it with a password (so it
//   works on every device), its key shown and copied for another browser,
//   and "Play anonymously", which asks first and says what is lost;
// - nobody: save a name (as before), use the key of a name from another
//   browser, or log in.
//
// Claiming is `PUT /api/account/password` {"password"} with the player
// token as Bearer, then a login with the name and the new password; the
// browser then holds the session instead of the token.

import { api } from './api.js';
import { h, clear } from './dom.js';
import { playerHref } from './format.js';
import { accountErrorText, currentAccount, logIn, onAccountChange } from './session.js';
import { getPlayer, savePlayer } from './storage.js';
import { t } from './i18n.js';

export function nameCard() {
  const card = h('section', { class: 'card player-card', id: 'your-name' });
  let account = null;
  // Whether the saved name has a password (asked of the server once).
  let claimed = null;
  // Said once under the saved name (a claim whose login then failed).
  let notice = '';

  const draw = () => {
    if (account) {
      clear(card,
        h('h2', null, t('Your name')),
        h('p', null, t('You are logged in as '), h('strong', { class: 'player-self' }, account.name),
          '. Your games count on the scoreboard under that name.'),
        h('p', { class: 'actions' },
          h('a', { href: playerHref(account.name), id: 'my-player-page' }, t('Your rating and games')),
          h('a', { href: '/me/games' }, t('My games'))));
      return;
    }
    const player = getPlayer();
    if (player) drawSaved(player);
    else drawAnonymous();
  };

  const drawSaved = (player) => {
    const parts = [
      h('h2', null, t('Your name')),
      h('p', null, t('Your games count on the scoreboard as '), h('strong', { class: 'player-self' }, player.name), '.'),
      h('p', { class: 'actions' },
        h('a', { href: playerHref(player.name), id: 'my-player-page' }, t('Your rating and games')),
        h('a', { href: '/me/games' }, t('My games'))),
    ];
    if (claimed === false) parts.push(claimForm(player));
    else if (claimed === true) {
      parts.push(h('p', { class: 'muted' }, `${player.name} has a password: `,
        h('a', { href: '/login' }, t('log in')), t(' to use it on any device.')));
    }
    if (notice) parts.push(h('p', { class: 'form-error', role: 'alert' }, notice));
    notice = '';
    parts.push(keyBox(player));
    const leave = h('button', { type: 'button', id: 'play-anonymously' }, t('Play anonymously'));
    const confirmBox = h('div', { class: 'confirm-box', role: 'group', 'aria-labelledby': 'forget-question', hidden: true });
    leave.addEventListener('click', () => {
      leave.hidden = true;
      confirmBox.hidden = false;
      const keep = h('button', { type: 'button', class: 'primary' }, `Keep ${player.name}`);
      keep.addEventListener('click', () => {
        confirmBox.hidden = true;
        leave.hidden = false;
        leave.focus();
      });
      const forget = h('button', { type: 'button', class: 'danger', id: 'forget-name' }, `Forget ${player.name}`);
      forget.addEventListener('click', () => {
        savePlayer(null);
        claimed = null;
        draw();
      });
      clear(confirmBox,
        h('p', { id: 'forget-question' }, h('strong', null, t('Play anonymously and forget {name}?', { name: player.name }))),
        claimed === true
          ? h('p', null, t('This browser will no longer play as {name}. You can get the name back by logging in with its password.', { name: player.name }))
          : h('p', { id: 'forget-warning' }, `${player.name} has no password, so this browser’s key is the only way to play as ${player.name}. `
            + t('Once forgotten, nobody can use the name again, you included, on any device. ')
            + t('Set a password above to keep it, or copy its key first.')),
        h('div', { class: 'actions' }, keep, forget));
      keep.focus();
    });
    parts.push(h('p', { class: 'actions' }, leave), confirmBox);
    clear(card, parts);
  };

  const claimForm = (player) => {
    const password = h('input', { type: 'password', id: 'claim-password', autocomplete: 'new-password', minlength: '8' });
    const message = h('p', { class: 'form-error', role: 'alert' });
    const submit = h('button', { type: 'submit' }, t('Set password'));
    const form = h('form', { class: 'inline-form claim-form', novalidate: true },
      h('label', { for: 'claim-password' }, t('Set a password to keep your name on every device')),
      // A password manager files the password under the name.
      h('input', { type: 'text', name: 'username', value: player.name, autocomplete: 'username', hidden: true, readonly: true, tabindex: '-1', 'aria-hidden': 'true' }),
      h('div', { class: 'invite-row' }, password, submit),
      h('p', { class: 'muted hint' }, t('At least 8 characters. Then log in with it anywhere; this browser stays logged in.')),
      message);
    password.addEventListener('input', () => { message.textContent = ''; });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      message.textContent = '';
      if (password.value.length < 8) {
        message.textContent = t('A password has at least 8 characters.');
        return;
      }
      submit.disabled = true;
      try {
        await api('PUT', '/api/account/password', { body: { password: password.value }, token: player.token });
        claimed = true;
        await logIn(player.name, password.value);
        // The account now carries the name: this browser holds its session,
        // and the bare token is no longer needed here.
        savePlayer(null);
      } catch (error) {
        submit.disabled = false;
        if (!claimed) {
          message.textContent = accountErrorText(error);
          return;
        }
        notice = t('The password is set, but logging in failed: {reason}', { reason: accountErrorText(error) });
        draw();
      }
    });
    return form;
  };

  const drawAnonymous = () => {
    const input = h('input', { type: 'text', id: 'player-name', name: 'name', maxlength: '20', autocomplete: 'nickname', pattern: '[A-Za-z0-9_\\-]{1,20}' });
    const message = h('p', { class: 'form-error', role: 'alert' });
    // Our own check and message, not the browser's bubble: with the bubble
    // the form is never submitted and an older message would stay.
    const form = h('form', { class: 'inline-form', novalidate: true },
      h('label', { for: 'player-name' }, t('Name (1–20 letters, digits, _ or -)')),
      h('div', { class: 'invite-row' }, input, h('button', { type: 'submit' }, t('Save name'))),
      message);
    // A message is about the name it was given: editing the name clears it.
    input.addEventListener('input', () => { message.textContent = ''; });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      message.textContent = '';
      const name = input.value.trim();
      if (!/^[A-Za-z0-9_-]{1,20}$/.test(name)) {
        message.textContent = t('Use 1–20 letters, digits, _ or -.');
        return;
      }
      try {
        const player = await api('POST', '/api/players', { body: { name } });
        savePlayer(player);
        claimed = false;
        draw();
      } catch (error) {
        message.textContent = error.code === 'name_taken' ? t('That name is taken. Try another.') : error.message;
      }
    });
    clear(card,
      h('h2', null, t('Your name')),
      h('p', { class: 'muted' }, t('Optional: pick a name to appear on the scoreboard.')),
      form,
      useKeyForm(),
      h('p', { class: 'muted' }, t('Or '), h('a', { href: '/login' }, t('log in')), ' / ', h('a', { href: '/signup' }, t('sign up')),
        t(' to keep your name, rating and games on every device.')));
  };

  // A name's key brought from another browser.
  const useKeyForm = () => {
    const input = h('input', { type: 'text', id: 'player-key-input', autocomplete: 'off', spellcheck: 'false' });
    const message = h('p', { class: 'form-error', role: 'alert' });
    const form = h('form', { class: 'inline-form', novalidate: true },
      h('label', { for: 'player-key-input' }, t('Key')),
      h('div', { class: 'invite-row' }, input, h('button', { type: 'submit' }, t('Use this key'))),
      message);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      message.textContent = '';
      const token = input.value.trim();
      if (!/^[0-9A-Za-z._~-]+$/.test(token)) {
        message.textContent = t('Paste the key as it was shown, without spaces.');
        return;
      }
      try {
        const who = await api('GET', '/api/account', { token });
        savePlayer({ id: who.player_id, name: who.name, token });
        claimed = who.has_password;
        draw();
      } catch (error) {
        message.textContent = error.status === 401 ? t('This key does not name anyone here.') : error.message;
      }
    });
    return h('details', { class: 'key-details' }, h('summary', null, t('Have a key from another browser?')), form);
  };

  draw();
  onAccountChange((now) => {
    account = now;
    draw();
  });
  currentAccount().then(async (now) => {
    account = now;
    const player = getPlayer();
    if (!account && player) {
      // Whether the saved name still names someone, and has a password.
      try {
        const who = await api('GET', '/api/account', { token: player.token });
        claimed = who.has_password;
      } catch (error) {
        if (error.status === 401) savePlayer(null);
      }
    }
    draw();
  });
  return card;
}

// The saved name's key, shown on demand with a copy button: the only
// credential of a name without a password.
export function keyBox(player) {
  const input = h('input', { type: 'text', id: 'player-key', class: 'key-field', readonly: true, value: player.token });
  const copy = copyButton(() => player.token, input);
  return h('details', { class: 'key-details' },
    h('summary', null, t('Show your name’s key')),
    h('p', { class: 'muted' }, `Anyone with this key plays as ${player.name}: keep it private. Paste it in another browser’s lobby ("Have a key from another browser?") to play as ${player.name} there.`),
    h('div', { class: 'invite-row' }, h('label', { for: 'player-key', class: 'visually-hidden' }, t('Key')), input, copy));
}

// A "Copy" button for a text, selecting `input` as well so a browser
// without clipboard access lets the person copy by hand.
export function copyButton(text, input) {
  const button = h('button', { type: 'button' }, t('Copy'));
  button.addEventListener('click', async () => {
    if (input) input.select();
    try {
      await navigator.clipboard.writeText(text());
      button.textContent = t('Copied');
    } catch {
      button.textContent = t('Select and copy');
    }
  });
  return button;
}
